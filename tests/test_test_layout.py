"""The tests mirror the package (resources/docs/development.md, "The test tree mirrors the
package"), checked against the tree so that the rule stays true:

- every folder of tests/ is the folder of a package: `tests/X/Y` tests `app/X/Y`, and
  `tests/db/`, `tests/packaging/` test `db/` and `packaging/`; the few folders that test
  no one package are named in SUPPORT with why;
- every package that holds modules has its folder of tests, or is named in UNMIRRORED with
  why: an entry there that has its folder now fails, so the list only shrinks;
- every folder of tests that holds modules, or mirrors a package, is a package itself (two
  test files may then share a name, `test_page.py` in each area).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The source folders outside app/ that have their own folder of tests, by that folder's name.
OWN_FOLDERS = ("db", "packaging", "resources")

# Folders of tests that test no one package, and all below them.
SUPPORT = {
    "tests/benchmarks": "speed and memory targets of the whole app, run on demand (make bench)",
    "tests/fixtures": "the public rating data and texts that tests in every folder read",
    "tests/tools": "the programs that take the guides' screenshots in real windows",
    "tests/metrics/structural/data": "the passages the structural metrics' tests parse",
}

# Packages with modules that have no folder of tests yet, each with where they are tested.
UNMIRRORED = {
    "db/migrations/versions": "each version is tested by upgrading a study made before it, "
    "in tests/db/migrations/",
}


def _folders(base: Path) -> list[Path]:
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_dir() and not any(part == "__pycache__" or part.startswith(".") for part in p.parts)
    )


def _name(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def source_of(folder: Path, root: Path) -> Path:
    """The source folder that a folder of tests tests: tests/X/Y → app/X/Y, tests/db → db."""
    parts = folder.relative_to(root / "tests").parts
    base = root if parts[0] in OWN_FOLDERS else root / "app"
    return base.joinpath(*parts)


def folder_of_tests(package: Path, root: Path) -> Path:
    """The folder of tests of a package: app/X/Y → tests/X/Y, db/Y → tests/db/Y."""
    parts = package.relative_to(root).parts
    return root.joinpath("tests", *(parts[1:] if parts[0] == "app" else parts))


def _in_support(name: str) -> bool:
    return any(name == s or name.startswith(f"{s}/") for s in SUPPORT)


def unmirrored_tests(root: Path) -> list[str]:
    """The folders of tests that mirror no source folder and are not support."""
    return [
        _name(f, root)
        for f in _folders(root / "tests")
        if not source_of(f, root).is_dir() and not _in_support(_name(f, root))
    ]


def untested_packages(root: Path) -> list[str]:
    """The packages with modules of their own that have no folder of tests."""
    found = []
    for base in (root / "app", *(root / f for f in OWN_FOLDERS)):
        for package in [base, *_folders(base)]:
            modules = {p.name for p in package.glob("*.py")} - {"__init__.py"}
            if package == root / "app" or not (package / "__init__.py").exists() or not modules:
                continue
            if not folder_of_tests(package, root).is_dir():
                found.append(_name(package, root))
    return found


def bare_tests(root: Path) -> list[str]:
    """The folders of tests without an `__init__.py` that hold modules or mirror a package."""
    return [
        _name(f, root)
        for f in [root / "tests", *_folders(root / "tests")]
        if not (f / "__init__.py").exists()
        and (any(f.glob("*.py")) or not _in_support(_name(f, root)))
    ]


def test_every_folder_of_tests_tests_a_package() -> None:
    strays = unmirrored_tests(ROOT)
    assert not strays, f"no source folder of this name (move, or name it in SUPPORT): {strays}"
    gone = [s for s in SUPPORT if not (ROOT / s).is_dir()]
    assert not gone, f"these are gone; take them off SUPPORT: {gone}"
    mirrors = [s for s in SUPPORT if source_of(ROOT / s, ROOT).is_dir()]
    assert not mirrors, f"these test a package now; take them off SUPPORT: {mirrors}"


def test_every_package_has_its_folder_of_tests() -> None:
    untested = set(untested_packages(ROOT))
    assert not untested - UNMIRRORED.keys(), (
        f"packages without a folder of tests: {sorted(untested - UNMIRRORED.keys())}"
    )
    kept = sorted(UNMIRRORED.keys() - untested)
    assert not kept, f"these have their folder of tests now; take them off UNMIRRORED: {kept}"


def test_every_folder_of_tests_is_a_package() -> None:
    bare = bare_tests(ROOT)
    assert not bare, f"folders of tests without an __init__.py: {bare}"


def test_the_checks_catch_what_breaks_them(tmp_path: Path) -> None:
    for module in (
        "app/__init__.py",
        "app/cli.py",
        "app/ui/__init__.py",
        "app/ui/theme.py",
        "app/ui/browser/__init__.py",
        "app/ui/browser/page.py",
        "app/ui/sweep/__init__.py",
        "app/ui/sweep/page.py",
        "app/ui/empty/__init__.py",
        "db/__init__.py",
        "db/study.py",
        "tests/__init__.py",
        "tests/ui/__init__.py",
        "tests/ui/browser/__init__.py",
        "tests/ui/browser/test_page.py",
        "tests/ui/stray/__init__.py",
        "tests/db/test_study.py",
        "tests/fixtures/datasets/rows.py",
    ):
        (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / module).touch()
    (tmp_path / "tests/metrics/structural/data").mkdir(parents=True)
    assert unmirrored_tests(tmp_path) == [
        "tests/metrics",
        "tests/metrics/structural",
        "tests/ui/stray",
    ]
    assert untested_packages(tmp_path) == ["app/ui/sweep"]  # a package without modules needs none
    assert bare_tests(tmp_path) == [
        "tests/db",
        "tests/fixtures/datasets",  # it holds a module
        "tests/metrics",
        "tests/metrics/structural",
    ]
