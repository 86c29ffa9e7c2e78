"""Every metric names its reference implementation and a parity test that exists."""

from __future__ import annotations

import ast
from pathlib import Path

from meaningbench.metrics.provenance import PROVENANCE
from meaningbench.metrics.registry import metric_classes

ROOT = Path(__file__).resolve().parents[2]


def test_every_metric_has_a_reference_and_a_test() -> None:
    missing = sorted(set(metric_classes()) - set(PROVENANCE))
    assert missing == [], f"metrics without provenance: {missing}"


def test_each_named_test_exists() -> None:
    for name, origin in PROVENANCE.items():
        path, function = origin.test.split("::")
        source = ROOT / path
        assert source.is_file(), (name, path)
        tree = ast.parse(source.read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function in defined, (name, origin.test)
