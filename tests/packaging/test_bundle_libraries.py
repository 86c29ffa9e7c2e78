"""The system libraries of the compiled packages the bundle carries: every ELF file that
packaging/bundle_files.py keeps must link only libraries that packaging/system_libraries.py
names a Debian package for, or `make deb` and `make dist` stop. Checked on the installed
packages' own files, placed where the bundle puts them."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
pytestmark = pytest.mark.skipif(not shutil.which("readelf"), reason="needs readelf (binutils)")


@pytest.fixture(scope="module")
def modules() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(PACKAGING))
    try:
        yield {n: importlib.import_module(n) for n in ("system_libraries", "bundle_files")}
    finally:
        sys.path.remove(str(PACKAGING))


def _bundle(root: Path, packages: tuple[str, ...], keep: object) -> Path:
    """A bundle folder holding the packages' compiled files that `keep(dest)` lets in."""
    bundle = root / "meaningbench"
    for name in packages:
        source = Path(importlib.import_module(name).__file__ or "").parent
        for lib in source.rglob("*.so*"):
            dest = f"{name}/{lib.relative_to(source).as_posix()}"
            if not keep(dest):  # type: ignore[operator]
                continue
            target = bundle / "_internal" / dest
            target.parent.mkdir(parents=True, exist_ok=True)
            try:  # read by readelf only: a link where it can be one, not a copy
                target.hardlink_to(lib)
            except OSError:
                shutil.copyfile(lib, target)
    return bundle


def test_numbas_kept_files_link_only_libraries_the_packages_name(
    modules: dict[str, ModuleType], tmp_path: Path
) -> None:
    """numba's compiled loops rank the metrics; its TBB threading layer links libtbb, which
    no package the .deb depends on gives, and the bundle leaves that layer out."""
    system_libraries, files = modules["system_libraries"], modules["bundle_files"]
    kept = _bundle(tmp_path / "kept", ("numba", "llvmlite"), files.used)
    needs = system_libraries.system_needs(kept)
    assert {"libc6", "libstdc++6"} <= set(needs.depends)
    assert not list(kept.rglob("tbbpool*")) and list(kept.rglob("workqueue*"))
    whole = _bundle(tmp_path / "whole", ("numba",), lambda dest: True)
    if list(whole.rglob("tbbpool*")):  # this numba was built with its TBB layer
        with pytest.raises(system_libraries.UnknownLibraries, match="libtbb"):
            system_libraries.system_needs(whole)


def test_the_packages_name_every_system_library_onnx_runtime_links(
    modules: dict[str, ModuleType], tmp_path: Path
) -> None:
    """ONNX Runtime and onnx, the encoder metrics' default on the CPU and its exporter."""
    bundle = _bundle(tmp_path, ("onnxruntime", "onnx"), modules["bundle_files"].used)
    needs = modules["system_libraries"].system_needs(bundle)
    assert any("onnxruntime_pybind11_state" in f for f in needs.sonames["libstdc++.so.6"])
    assert any("onnx_cpp2py_export" in f for f in needs.sonames["libc.so.6"])
    assert {"libc6", "libstdc++6", "libgcc-s1"} <= set(needs.depends)


@pytest.mark.parametrize(
    ("dest", "bundled"),
    [
        ("numba/np/ufunc/tbbpool.cpython-311-x86_64-linux-gnu.so", False),
        ("numba/np/ufunc/omppool.cpython-311-x86_64-linux-gnu.so", False),
        ("numba/np/ufunc/workqueue.cpython-311-x86_64-linux-gnu.so", True),
        ("torch/bin/torch_shm_manager", True),
        ("torch/bin/test_api", False),
        ("torch/lib/libtorchbind_test.so", False),
        ("pyarrow/libarrow_flight.so.2000", False),
        ("pyarrow/_parquet.cpython-311-x86_64-linux-gnu.so", True),
        ("PySide6/Qt/translations/qt_de.qm", False),
        ("onnxruntime/capi/onnxruntime_pybind11_state.so", True),
    ],
)
def test_what_the_bundle_leaves_out(
    modules: dict[str, ModuleType], dest: str, bundled: bool
) -> None:
    assert modules["bundle_files"].used(dest) is bundled
