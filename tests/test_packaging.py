"""The wheel's layout: one import package, `meaningbench`, from the folders app/, db/, resources/.

setuptools cannot find the packages of a `package-dir` mapping itself, so pyproject.toml lists
them; these tests fail when a package folder or a data file would be left out of a wheel.
The wheel's requirements are the engine's, without Qt: the desktop app is the `app` extra.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path

import pytest

from tests.packaging.test_bundle_data import canonical, requirement_closure

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = CONFIG["tool"]["setuptools"]
MAPPING = SETUPTOOLS["package-dir"]


def package_folders() -> dict[str, Path]:
    """Every folder holding Python files under the mapped folders, by its import name."""
    found: dict[str, Path] = {}
    for name, folder in MAPPING.items():
        base = ROOT / folder
        for d in [base, *base.rglob("*")]:
            if d.is_dir() and "__pycache__" not in d.parts and any(d.glob("*.py")):
                found[".".join([name, *d.relative_to(base).parts])] = d
    return found


def test_one_import_package() -> None:
    assert MAPPING == {
        "meaningbench": "app",
        "meaningbench.db": "db",
        "meaningbench.resources": "resources",
    }
    assert {p.split(".")[0] for p in SETUPTOOLS["packages"]} == {"meaningbench"}
    assert CONFIG["project"]["scripts"]["meaningbench"] == "meaningbench.cli:main"


def test_every_package_folder_is_listed() -> None:
    assert sorted(SETUPTOOLS["packages"]) == sorted(package_folders())


@pytest.mark.parametrize("package", sorted(package_folders()))
def test_data_files_are_package_data(package: str) -> None:
    folder = package_folders()[package]
    data = SETUPTOOLS["package-data"]
    globs = data.get("*", []) + data.get(package, [])
    inner = {f"{d.relative_to(folder)}/" for d in folder.iterdir() if d.is_dir()}
    for f in folder.rglob("*"):
        rel = f.relative_to(folder).as_posix()
        if not f.is_file() or f.suffix in {".py", ".pyc"} or "__pycache__" in rel:
            continue
        owner = next((d for d in inner if rel.startswith(d)), None)
        if owner is not None and f"{package}.{owner[:-1]}" in SETUPTOOLS["packages"]:
            continue  # a package of its own, checked there
        # setuptools' globs do not cross folders: "*.md" is a file beside __init__.py
        matched = any(fnmatch.fnmatch(rel, g) and ("/" in g) == ("/" in rel) for g in globs)
        assert matched, f"{package}: {rel} is not package data"


# The desktop app's distributions: the `app` extra's, and pytest-qt, which needs a Qt binding.
QT_DISTRIBUTIONS = {"pyside6", "pyside6-essentials", "shiboken6", "pyqtgraph", "pytest-qt"}


def requirement_names(extra: str | None = None) -> set[str]:
    """The distributions pyproject.toml names for the engine (None) or for an extra."""
    from packaging.requirements import Requirement

    project = CONFIG["project"]
    specs = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {canonical(Requirement(spec).name) for spec in specs}


def makefile_extras(stamp: str) -> set[str]:
    """The extras of the project that a Makefile rule (its target's name) installs."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    rule = re.search(rf"^\$\({stamp}\):.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert rule, stamp
    found = re.findall(r'-e "?\.(?:\[([\w,]*)\])?', rule.group(1))
    assert found, f"the {stamp} rule installs no project"
    return {e for extras in found for e in extras.split(",") if e}


def test_the_engine_requires_no_qt() -> None:
    # `pip install meaningbench`, and the engine's venv of `make test`.
    for extra in (None, "test", "cluster"):
        assert not requirement_names(extra) & QT_DISTRIBUTIONS, extra
    # Transitively too, read from what is installed here.
    engine = requirement_closure({"meaningbench": ("", "test", "cluster")})
    assert {"meaningbench", "sqlalchemy", "torch", "pytest", "ray"} <= engine
    assert not engine & QT_DISTRIBUTIONS


def test_the_app_extra_is_the_desktop_app_and_installed_for_it() -> None:
    from meaningbench.desktop import APP_INSTALL, APP_MODULES

    assert {"pyside6-essentials", "pyqtgraph"} == requirement_names("app")
    assert APP_MODULES == ("PySide6", "pyqtgraph") and "meaningbench[app]" in APP_INSTALL
    assert "meaningbench" in requirement_names("dev")  # dev = app + test + the linters
    # make run, make test and the bundle install the app; make test-engine does not.
    assert "app" in makefile_extras("APP_STAMP")
    assert "app" in makefile_extras("PYINSTALLER")
    assert makefile_extras("ENGINE_STAMP") == {"test", "cluster"}


def test_make_test_runs_each_test_once_and_the_engines_without_qt() -> None:
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert recipe, "the Makefile has no test rule"
    runs = re.findall(r"^\t\$\((\w+)\) -m pytest .*-m \"([^\"]+)\"", recipe.group(1), re.MULTILINE)
    # The four selections partition the suite: the app's tests (gui) in the app's venv,
    # the rest in the engine's, each split into the slow ones and the others.
    assert sorted(runs) == sorted(
        [
            ("PY", "gui and not slow"),
            ("PY", "gui and slow"),
            ("ENGINE_PY", "not gui and not slow"),
            ("ENGINE_PY", "not gui and slow"),
        ]
    )
    assert "$(ENGINE_PY) -c '$(NO_APP_CHECK)'" in recipe.group(1)
