"""Every built-in metric names its reference implementation and a parity test that exists."""

from __future__ import annotations

import ast
from pathlib import Path

from meaningbench.metrics.registry import metric_classes, metric_origin

ROOT = Path(__file__).resolve().parents[2]


def test_every_metric_has_a_reference_and_a_test() -> None:
    missing = sorted(
        name
        for name, cls in metric_classes().items()
        if metric_origin(name).built_in and not (cls.info.reference and cls.info.parity_test)
    )
    assert missing == [], f"metrics without a reference or a parity test: {missing}"


def test_each_named_test_exists() -> None:
    for name, cls in metric_classes().items():
        if not metric_origin(name).built_in:
            continue
        path, function = cls.info.parity_test.split("::")
        source = ROOT / path
        assert source.is_file(), (name, path)
        tree = ast.parse(source.read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert function in defined, (name, cls.info.parity_test)
