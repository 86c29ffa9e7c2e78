"""The Run metrics dialog says which backend runs each encoder, built-in or registered, and
the runs it starts take the same backend, config and scores as `meaningbench score`."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.ui.dialogs.test_battery import battery_on, metric_item, scores_of
from tests.ui.factories import Facts
from tests.ui.tiny_models import save_tiny_albert, save_tiny_bert

ONNX_CPU = "onnx (ONNX Runtime, CPU)"
TINY = ("sbert_cosine@tiny", "bertscore@tiny")  # a sentence encoder serves both
ALBERT = ("sbert_cosine@albert", "bertscore@albert")


@pytest.fixture
def study_with_encoders(study_with_facts: tuple[Path, Facts], tmp_path: Path) -> Path:
    """The populated study with two registered sentence encoders: a tiny BERT (ONNX Runtime
    runs it) and a tiny ALBERT (a model type that is not exported: torch runs it)."""
    from meaningbench.db.study import open_study
    from meaningbench.training.register import register_model

    path, _ = study_with_facts
    bert = save_tiny_bert(tmp_path / "tiny-bert")
    albert = save_tiny_albert(tmp_path / "tiny-albert")
    study = open_study(path)
    with study.session(write=True) as s:
        register_model(s, name="tiny", path=bert, card={}, metric="sbert_cosine")
        register_model(s, name="albert", path=albert, card={}, metric="sbert_cosine")
    study.close()
    return path


def test_registered_encoders_say_their_backend_as_the_built_in_ones_do(
    window, qtbot, study_with_encoders: Path
) -> None:
    from meaningbench.jobs.metric_listing import list_metrics
    from meaningbench.metrics.neural.support.common import NeuralMetric
    from meaningbench.metrics.registry import metric_classes

    dialog = battery_on(window, qtbot, study_with_encoders)
    oracle = {m.name: m for m in list_metrics(study_with_encoders)}
    assert oracle["sbert_cosine"].backend == ONNX_CPU
    for name in TINY:
        assert oracle[name].backend == ONNX_CPU
        item = metric_item(dialog, name)
        assert item.text(2) == "available · runs on onnx"
        assert f"Runs on {ONNX_CPU}, with the metric's default device" in item.toolTip(2)
    why = "torch (model type albert is not exported to ONNX)"
    for name in ALBERT:
        assert oracle[name].backend == why
        item = metric_item(dialog, name)
        assert item.text(2) == "available · runs on torch"
        assert f"Runs on {why}" in item.toolTip(2)
    # One rule for every row: a runnable metric with the choice of backend says which,
    # whether it came with the program or was registered in the study.
    # (The LLM judge's `backend` is another choice: embedded model or endpoint.)
    classes = metric_classes()

    def has_choice(name: str) -> bool:
        cls = classes[name.split("@")[0]]
        return issubclass(cls, NeuralMetric) and "backend" in cls.defaults

    with_choice = [m for m in dialog.metrics if m.available and has_choice(m.name)]
    assert {m.name for m in with_choice} >= {"bertscore", "sbert_cosine", *TINY, *ALBERT}
    for m in with_choice:
        assert m.backend, m.name
        shown = m.backend.split(" ", 1)[0]
        assert metric_item(dialog, m.name).text(2).endswith(f"runs on {shown}"), m.name
    dialog.close()


def runs_of(path: Path) -> dict[str, tuple[str, dict, dict]]:
    """label -> (config hash, config, versions) of the finished runs of the tiny model."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT label, config_hash, config, versions FROM metric_run WHERE status = 'done' "
            "AND label LIKE '%@tiny%'"
        ).fetchall()
    finally:
        conn.close()
    return {label: (h, json.loads(c), json.loads(v)) for label, h, c, v in rows}


def test_the_dialogs_run_takes_the_onnx_backend_as_the_command_does(
    window, qtbot, study_with_encoders: Path, tmp_path: Path
) -> None:
    from meaningbench.cli import main
    from meaningbench.metrics.registry import metric_classes
    from meaningbench.settings import data_dir

    by_command = tmp_path / "by-command.mbstudy"
    shutil.copyfile(study_with_encoders, by_command)
    dialog = battery_on(window, qtbot, study_with_encoders)
    dialog.set_checked(list(TINY))
    job = dialog.start()
    assert job is not None
    qtbot.waitUntil(lambda: not job.running, timeout=300_000)
    assert job.outcome == "done", job.failure
    statuses = {s.metric: s.status for s in dialog.summaries}
    assert statuses == {"sbert_cosine": "done", "bertscore": "done"}, dialog.summaries
    dialog.close()
    app_runs = runs_of(study_with_encoders)
    assert len(app_runs) == 2, app_runs
    classes = metric_classes()
    for label, (config_hash, config, versions) in app_runs.items():
        assert versions["backend"] == ONNX_CPU and versions["onnxruntime"], label
        # The backend is in the config hash, the score cache's key: a torch run's differs.
        as_torch = classes[label.split("@")[0]](**{**config, "backend": "torch"})
        assert config["backend"] is None and config_hash != as_torch.config_hash(), label
    # The app's job exported the encoder once (both metrics read its last layer) into the
    # data folder, where the command finds it and exports nothing again.
    (export,) = (data_dir() / "onnx").glob("*.onnx")
    exported_at = export.stat().st_mtime_ns
    assert main(["score", str(by_command), "--metrics", ",".join(TINY), "--quiet"]) == 0
    assert list((data_dir() / "onnx").glob("*.onnx")) == [export]
    assert export.stat().st_mtime_ns == exported_at
    command_runs = runs_of(by_command)
    assert {k: (h, v["backend"]) for k, (h, _, v) in command_runs.items()} == {
        k: (h, v["backend"]) for k, (h, _, v) in app_runs.items()
    }
    for name in TINY:
        metric = name.split("@")[0]
        app_scores, command_scores = (
            scores_of(study_with_encoders, metric),
            scores_of(by_command, metric),
        )
        assert app_scores.keys() == command_scores.keys() and app_scores
        for item_id, value in app_scores.items():
            assert command_scores[item_id] == pytest.approx(value, abs=1e-6)
