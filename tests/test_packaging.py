"""The wheel's layout: one import package, `meaningbench`, from the folders app/, db/, resources/.

setuptools cannot find the packages of a `package-dir` mapping itself, so pyproject.toml lists
them; these tests fail when a package folder or a data file would be left out of a wheel.
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

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
