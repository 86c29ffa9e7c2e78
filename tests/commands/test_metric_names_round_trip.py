"""Every metric name a command prints is accepted by every command that takes metric names,
and selects the same configuration and the same scores.

The printer and the parser are `meaningbench.metrics.names` (the checks of a parsed spec
against the registry and the study: `meaningbench.jobs.metric_specs`); the first test runs
every registered metric and option through both, the second drives the real commands.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from meaningbench.cli import main
from meaningbench.jobs.metric_specs import configured_names
from meaningbench.metrics.base import REFERENCE_MODES
from meaningbench.metrics.names import metric_canonical_name
from meaningbench.metrics.registry import metric_classes


def _variants(defaults: dict[str, Any]) -> list[dict[str, Any]]:
    """The default config, then one option at a time set to another value of its type."""
    out: list[dict[str, Any]] = [{}]
    for key, value in defaults.items():
        if key == "reference_mode":
            out += [{key: mode} for mode in REFERENCE_MODES]
        elif isinstance(value, bool):
            out.append({key: not value})
        elif isinstance(value, int):
            out.append({key: value + 1})
        elif isinstance(value, float):
            out.append({key: value + 0.25})
        elif key == "quantize":  # its one value; an int is refused as it should be
            out.append({key: "int8"})
        elif key == "backend":  # None: the default backend; either can be named
            out += [{key: "torch"}, {key: "onnx"}]
        elif value is None:
            out.append({key: 3})
        elif key == "model":
            out.append({key: "/opt/models/some-encoder"})
    return out


CASES = [
    pytest.param(name, variant, id=f"{name}-{'-'.join(f'{k}={v}' for k, v in variant.items())}")
    for name, cls in sorted(metric_classes().items())
    for variant in _variants(dict(cls.defaults))
]


@pytest.mark.parametrize(("metric", "options"), CASES)
def test_every_printed_name_parses_back_to_its_configuration(
    metric: str, options: dict[str, Any]
) -> None:
    cls = metric_classes()[metric]
    try:
        configured = cls(**options)
    except (TypeError, ValueError):
        pytest.skip(f"{metric} refuses {options} at construction")  # not a configuration
    name = metric_canonical_name(configured)
    (back,) = configured_names([name], [])
    assert back.name == name
    assert back.metric == metric
    runtime = cls.runtime_options
    assert {k: v for k, v in back.config.items() if k not in runtime} == {
        k: v for k, v in configured.config.items() if k not in runtime
    }
    assert cls(**back.config).config_hash() == configured.config_hash()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out


ITEMS = (
    "source,output,reference,system,annotator,meaning\n"
    "The old bridge was closed for repairs.,The bridge was closed.,The old bridge was shut.,a,r1,80\n"
    "The old bridge was closed for repairs.,Bridges are nice.,The old bridge was shut.,b,r1,10\n"
    "Rain fell all day in the valley.,It rained all day.,It rained in the valley all day.,a,r1,85\n"
    "Rain fell all day in the valley.,The valley is green.,It rained in the valley all day.,b,r1,15\n"
    "Cats sleep most of the day.,Cats sleep a lot.,Cats spend most days asleep.,a,r1,90\n"
    "Cats sleep most of the day.,Dogs bark.,Cats spend most days asleep.,b,r1,5\n"
)


def test_names_printed_by_commands_select_the_same_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "ratings.csv"
    data.write_text(ITEMS, encoding="utf-8")
    study = tmp_path / "s.mbstudy"
    assert _run(["import", str(study), str(data)], capsys)[0] == 0
    asked = "bleu,bleu[lowercase],chrf[refs=references],sari[item_variant=easse]"
    code, out = _run(["score", str(study), "--metrics", asked, "--json"], capsys)
    assert code == 0
    printed = [r["label"] for r in json.loads(out)["runs"]]
    assert len(set(printed)) == 4

    export = tmp_path / "items.csv"
    assert _run(["export", str(study), str(export)], capsys)[0] == 0
    with export.open(encoding="utf-8", newline="") as fh:
        header = next(csv.reader(fh))
    code, out = _run(["correlate", str(study), "--json", "--boot", "0"], capsys)
    correlated = set(json.loads(out)["metrics"])
    assert set(printed) <= set(header) and set(printed) == correlated

    for name in printed:
        # score: the same configuration, so every score is already there
        code, out = _run(["score", str(study), "--metrics", name, "--json"], capsys)
        (run,) = json.loads(out)["runs"]
        assert (code, run["label"], run["scored"], run["cached"]) == (0, name, 0, 6)
        code, out = _run(["sanity", str(study), "--metrics", name, "--json", "--n", "2"], capsys)
        assert code == 0 and set(json.loads(out)["metrics"]) == {name}
        code, out = _run(["corpus", str(study), "--metrics", name, "--json"], capsys)
        assert code == 0 and set(json.loads(out)["systems"]["a"]) == {name}
        code, out = _run(
            ["report", str(study), str(tmp_path / "r.html"), "--sanity-metrics", name], capsys
        )
        assert code == 0
