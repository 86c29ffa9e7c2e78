"""What the bundle leaves out of the files PyInstaller collects: one rule, read by the spec
(packaging/meaningbench.spec) and checked by tests/packaging without a build."""

from __future__ import annotations

from pathlib import PurePosixPath

# Collected with torch and Qt but never used: torch's tests, test programs and libraries
# (torch/bin keeps torch_shm_manager, which `import torch` looks for), its C++ headers,
# Qt's translations (the program is in English).
UNUSED = ("torch/test/", "torch/include/", "PySide6/Qt/translations/")
UNUSED_LIBS = ("libtorchbind_test.so", "libjitbackend_test.so", "libbackend_with_compiler.so")

# numba's threading layers run only `parallel=True` code, which the program has none of
# (its compiled loops release the GIL and run on its own thread pool). The TBB layer links
# libtbb, which no Debian package the .deb depends on provides, and the OpenMP one libgomp;
# numba falls back to its own workqueue layer if ever asked.
UNUSED += ("numba/np/ufunc/tbbpool", "numba/np/ufunc/omppool")

# pyarrow (for `meaningbench dataset`, which writes one Parquet file to a local path): its
# C++ headers and Cython sources, and the libraries of Arrow Flight and of the S3 file
# system (50 MB), which only pyarrow.flight and pyarrow._s3fs load; pyarrow.fs goes on
# without S3 when _s3fs cannot be imported.
UNUSED += ("pyarrow/include/", "pyarrow/src/")
PYARROW_UNUSED = (
    "libarrow_flight.",
    "libarrow_python_flight.",
    "libarrow_s3.",
    "_flight.",
    "_s3fs.",
)
PYARROW_SOURCES = (".pyx", ".pxd", ".pxi")


def used(dest: str) -> bool:
    """Whether the file PyInstaller would put at `dest` (inside _internal) is bundled."""
    dest = dest.replace("\\", "/")
    name = PurePosixPath(dest).name
    if dest.startswith("torch/bin/"):
        return name == "torch_shm_manager"
    if (dest.startswith("pyarrow/") or name.startswith("libarrow")) and (
        name.startswith(PYARROW_UNUSED) or name.endswith(PYARROW_SOURCES)
    ):
        return False
    return not dest.startswith(UNUSED) and name not in UNUSED_LIBS
