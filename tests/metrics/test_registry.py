"""The registry: entry points found through importlib.metadata, loaded one metric at a time;
broken plugins reported by name, module and error while the others work; `register()` for
programs and tests.

Plugins here are distributions on sys.path as pip leaves them: a package folder and a
`.dist-info` with METADATA and entry_points.txt (tests/metrics/test_plugins.py installs one
with pip and drives the commands).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from meaningbench.metrics import registry
from meaningbench.metrics.base import ItemScore, Metric, MetricInfo
from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric

GOOD = """
from meaningbench.metrics.base import ItemScore, Metric, MetricInfo

class Echo(Metric):
    info = MetricInfo("echo_len", "Echo", "lexical", "output length")
    def score_batch(self, pairs, cancel=None):
        return [ItemScore(len(p.output), len(p.output)) for p in pairs]

class Misnamed(Echo):
    info = MetricInfo("other_name", "Other", "lexical", "named unlike its entry point")

NOT_A_METRIC = 42
"""


def _distribution(site: Path, name: str, entry_points: dict[str, str], module: str = "") -> None:
    package = name.replace("-", "_")
    if module:
        (site / package).mkdir()
        (site / package / "__init__.py").write_text(module, encoding="utf-8")
    info = site / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
    )
    lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[meaningbench.metrics]\n{lines}", encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for throw-away distributions; the registry reads them afresh."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.forget_entry_points()
    yield tmp_path
    monkeypatch.undo()
    for name in [m for m in sys.modules if m.startswith(("lab_one", "lab_two"))]:
        del sys.modules[name]
    registry.forget_entry_points()


def test_plugins_load_beside_the_battery_and_broken_ones_are_reported(site: Path) -> None:
    _distribution(
        site,
        "lab-one",
        {
            "echo_len": "lab_one:Echo",
            "misnamed": "lab_one:Misnamed",
            "number": "lab_one:NOT_A_METRIC",
            "missing": "lab_one.nowhere:Gone",
            "bleu": "lab_one:Echo",  # may not replace the battery's BLEU
            "shared": "lab_one:Echo",
        },
        GOOD,
    )
    _distribution(site, "lab-two", {"shared": "lab_two:Echo"}, GOOD)

    echo = registry.get_metric_class("echo_len")
    assert [s.value for s in echo().score_batch([_pair("four")])] == [4]
    assert registry.metric_origin("echo_len").describe() == "lab-one 1.0 (lab_one:Echo)"
    assert registry.get_metric_class("bleu") is BleuMetric
    assert registry.metric_origin("bleu").built_in

    broken = {(b.name, b.distribution): b for b in registry.broken_plugins()}
    assert set(broken) == {
        ("misnamed", "lab-one"),
        ("number", "lab-one"),
        ("missing", "lab-one"),
        ("bleu", "lab-one"),
        ("shared", "lab-one"),
    }
    assert "info.name='other_name'" in broken["misnamed", "lab-one"].error
    assert "not a subclass of meaningbench.metrics.base.Metric" in broken["number", "lab-one"].error
    assert broken["missing", "lab-one"].error.startswith("ModuleNotFoundError")
    assert broken["missing", "lab-one"].module == "lab_one.nowhere:Gone"
    assert broken["bleu", "lab-one"].error == "MeaningBench has a metric of that name"
    shared = broken["shared", "lab-one"].error
    assert "lab-one (lab_one:Echo)" in shared and "lab-two (lab_two:Echo)" in shared

    classes = registry.metric_classes()
    assert "echo_len" in classes and "sari" in classes
    assert not {"misnamed", "number", "missing", "shared"} & set(classes)
    with pytest.raises(KeyError, match="installed but broken: missing from lab-one"):
        registry.get_metric_class("missing")


def _pair(output: str) -> Any:
    from meaningbench.metrics.base import Pair

    return Pair(1, "source", output, ())


class _Mine(Metric):
    info: ClassVar[MetricInfo] = MetricInfo("mine_for_test", "Mine", "lexical", "a test metric")

    def score_batch(self, pairs: Any, cancel: Any = None) -> list[ItemScore]:
        return [ItemScore(1.0, 1.0) for _ in pairs]


def test_register_adds_a_class_and_refuses_a_second_of_one_name() -> None:
    registry.register(_Mine)
    try:
        assert registry.get_metric_class("mine_for_test") is _Mine
        assert registry.metric_origin("mine_for_test").distribution == registry.REGISTERED
        assert registry.register(BleuMetric) is BleuMetric  # the installed one: no change

        class Impostor(_Mine):
            info = MetricInfo("bleu", "BLEU?", "lexical", "another BLEU")

        with pytest.raises(ValueError, match="two metrics are named 'bleu'"):
            registry.register(Impostor)
    finally:
        registry.unregister("mine_for_test")
    assert "mine_for_test" not in registry.metric_classes()


def test_listing_the_battery_imports_no_torch_and_one_metric_only_its_module() -> None:
    code = (
        "import sys\n"
        "from meaningbench.metrics.registry import get_metric_class, metric_classes\n"
        "get_metric_class('bleu')\n"
        "print('neural' if 'meaningbench.metrics.neural.bertscore' in sys.modules else '-')\n"
        "names = metric_classes()\n"
        "print(len(names), 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    one, listed = done.stdout.split("\n")[:2]
    assert one == "-"
    assert listed == f"{len(registry.metric_classes())} False False"
