"""`meaningbench simulate --compare-subset2evaluate`: the package's methods as rows beside the
strategies, and without the package one line naming the install command and nothing run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from meaningbench.cli import main
from tests.analysis.studybuild import SOURCES, add_items, add_ratings, add_scores


@pytest.fixture
def study(new_study) -> Path:  # noqa: ANN001
    rng = np.random.default_rng(5)
    rows = [(s, f"{s} output {k} {'word ' * k}", f"sys{k}") for s in SOURCES for k in range(3)]
    ids = add_items(new_study, rows)
    truth = rng.uniform(10, 90, len(ids))
    add_ratings(new_study, "ann", {i: float(t) for i, t in zip(ids, truth, strict=True)})
    noisy = {i: float(t + rng.normal(0, 8)) for i, t in zip(ids, truth, strict=True)}
    add_scores(new_study, "bleu", noisy)
    add_scores(new_study, "chrf", {i: float(rng.uniform(0, 100)) for i in ids})
    return Path(new_study.path)


@pytest.mark.parametrize("target", ["metrics", "systems"])
def test_the_baselines_stand_in_the_same_json_and_plot(
    study: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    pytest.importorskip("subset2evaluate.methods")
    plot = tmp_path / "plot.svg"
    args = ["simulate", str(study), "--target", target, "--seeds", "2", "--step", "50"]
    args += ["--resamples", "20", "--compare-subset2evaluate", "--baseline-metric", "chrf"]
    assert main([*args, "--json", "--out", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    block = out["subset2evaluate"]
    assert block["package"] == "subset2evaluate 1.0.27" and block["metric"] == "chrf[refs=source]"
    assert block["sources"] == len(SOURCES) and block["sources_without_every_system"] == 0
    names = [row["strategy"] for row in out["field_protocol"]["strategies"]]
    assert names[-len(block["ran"]) :] == block["ran"]
    assert {"s2e metric_var", "s2e metric_cons", "s2e div_unigram", "s2e div_bleu"} <= set(names)
    assert set(block["ran"]) | set(block["unavailable"]) == set(block["methods"])
    svg = plot.read_text(encoding="utf-8")
    assert "s2e div_bleu" in svg and "stroke-dasharray='6 3'" in svg
    # On the terminal: the rows and what did not run, with its reason.
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "s2e metric_var" in text and "subset2evaluate 1.0.27's own methods" in text
    for name, why in block["unavailable"].items():
        assert f"{name}: unavailable: {why}" in text


def test_without_the_package_it_names_the_install_command_and_runs_nothing(
    study: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The package as absent as an uninstalled one: its import fails.
    monkeypatch.setitem(sys.modules, "subset2evaluate", None)
    monkeypatch.setitem(sys.modules, "subset2evaluate.methods", None)
    plot = tmp_path / "plot.svg"
    args = ["simulate", str(study), "--compare-subset2evaluate", "--out", str(plot)]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "pip install subset2evaluate==1.0.27 --no-deps" in captured.err
    assert "Traceback" not in captured.err and captured.out == "" and not plot.exists()


def test_a_baseline_metric_needs_the_flag_and_a_candidate_metric(
    study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", str(study), "--baseline-metric", "bleu"]) == 2
    assert "only with --compare-subset2evaluate" in capsys.readouterr().err
    pytest.importorskip("subset2evaluate.methods")
    args = ["simulate", str(study), "--compare-subset2evaluate", "--baseline-metric", "ter"]
    assert main([*args, "--seeds", "1"]) == 2
    err = capsys.readouterr().err
    assert "--baseline-metric ter" in err and "not a candidate metric here" in err
