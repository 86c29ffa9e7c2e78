"""The bundle (and so the .deb and the portable archive, which carry the bundle's folder
whole) brings ONNX Runtime and the ONNX exporter, the encoder metrics' default on the CPU;
bundle_check.py, which deb_check.py runs on the installed package and on the unpacked
archive, fails when the bundled BERTScore did not run on ONNX Runtime."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.packaging.test_bundle_data import (
    BUNDLE_DATA,
    SPEC,
    bundle_install,
    requirement_closure,
    spec_excludes,
)

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
ONNX_DISTRIBUTIONS = ("onnxruntime", "onnx")


def spec_hidden_imports() -> list[str]:
    """The module names the spec lists by hand in `hiddenimports` (its collect_… calls left
    aside)."""
    tree = ast.parse(SPEC.read_text(encoding="utf-8"))
    node = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "hiddenimports"
    )
    return [
        str(c.value)
        for lst in ast.walk(node.value)
        if isinstance(lst, ast.List)
        for c in lst.elts
        if isinstance(c, ast.Constant)
    ]


def test_the_spec_brings_onnx_runtime_and_the_exporter_it_imports_inside_functions() -> None:
    # The metrics import all three inside functions, where PyInstaller's analysis does not
    # look: without the hidden imports the bundle would run every encoder in torch.
    assert {"onnxruntime", "onnx", "torch.onnx"} <= set(spec_hidden_imports())
    assert not {"onnxruntime", "onnx", "onnxscript"} & spec_excludes()
    # Their versions are recorded with each ONNX run, and key the export's failure note.
    assert set(ONNX_DISTRIBUTIONS) <= set(BUNDLE_DATA.METADATA)
    assert set(ONNX_DISTRIBUTIONS) <= set(BUNDLE_DATA.metadata_distributions())
    # The bundle's install (the Makefile's) brings both: they are the project's requirements.
    assert set(ONNX_DISTRIBUTIONS) <= requirement_closure(bundle_install())


@pytest.fixture(scope="module")
def packaging_modules() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(PACKAGING))
    try:
        yield {"bundle_check": importlib.import_module("bundle_check")}
    finally:
        sys.path.remove(str(PACKAGING))


def small_study(path: Path) -> Path:
    from meaningbench.datasets.demo import demo_data_file
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study

    rows = demo_data_file().read_text(encoding="utf-8").splitlines()[:3]
    data = path.with_suffix(".jsonl")
    data.write_text("\n".join(rows) + "\n", encoding="utf-8")
    study = create_study(path)
    import_file(study, data, fmt="wide", dataset="small")
    study.close()
    return path


def test_bundle_check_fails_unless_bertscore_ran_on_onnx_runtime(
    packaging_modules: dict[str, ModuleType], tmp_path: Path
) -> None:
    from meaningbench.cli import main
    from meaningbench.settings import data_dir
    from tests.ui.tiny_models import save_tiny_bert

    onnx_problem = packaging_modules["bundle_check"].onnx_problem
    model = save_tiny_bert(tmp_path / "tiny")
    home = data_dir()
    unscored = small_study(tmp_path / "unscored.mbstudy")
    assert onnx_problem(unscored, home) == "unscored.mbstudy holds no finished bertscore run"
    in_torch = small_study(tmp_path / "torch.mbstudy")
    spec = f"bertscore[model={model},backend=torch]"
    assert main(["score", str(in_torch), "--metrics", spec, "--quiet"]) == 0
    assert onnx_problem(in_torch, home) == (
        "bertscore ran on torch (asked for), not on ONNX Runtime"
    )
    on_onnx = small_study(tmp_path / "onnx.mbstudy")
    spec = f"bertscore[model={model}]"
    assert main(["score", str(on_onnx), "--metrics", spec, "--quiet"]) == 0
    assert onnx_problem(on_onnx, home) is None
    # A graph without its hash is an export cut short, not one the run could have used.
    for digest in (home / "onnx").glob("*.sha256"):
        digest.unlink()
    assert onnx_problem(on_onnx, home) == (
        f"no whole ONNX export (a graph and its hash) in {home / 'onnx'}"
    )
