"""The battery dialog running real lexical metrics: availability, progress, scores, cancel."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sacrebleu  # noqa: E402
from PySide6.QtCore import Qt

from meaningbench.core.wording import counted
from meaningbench.runtime import Progress
from tests.ui.conftest import open_in
from tests.ui.factories import bulk_study
from tests.ui.test_workers import close_error_boxes


def wait_metrics(qtbot, dialog) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: bool(dialog.metrics), timeout=120_000)


def battery_on(window, qtbot, path: Path):  # noqa: ANN001, ANN201
    """The window on the study at `path`, its Run metrics dialog open with the list read."""
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    return dialog


def metric_item(dialog, name: str):  # noqa: ANN001, ANN201
    return next(
        i for i in dialog._metric_items() if i.data(0, Qt.ItemDataRole.UserRole + 1) == name
    )


def scores_of(path: Path, metric: str) -> dict[int, float]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT s.item_id, s.value FROM score s JOIN metric_run m ON m.id = s.run_id "
            "WHERE m.metric = ? AND s.error IS NULL",
            (metric,),
        ).fetchall()
    finally:
        conn.close()
    return {int(i): float(v) for i, v in rows}


def test_metric_list_shows_availability_and_reasons(window, qtbot, study_with_facts) -> None:
    from meaningbench.jobs.metric_listing import list_metrics

    path, _ = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    oracle = {m.name: m for m in list_metrics(path)}
    assert {m.name for m in dialog.metrics} == set(oracle)
    for name, m in oracle.items():
        item = metric_item(dialog, name)
        enabled = bool(item.flags() & Qt.ItemFlag.ItemIsEnabled)
        assert enabled == m.available, name
        if not m.available:
            assert m.reason in item.toolTip(2)
            if m.fix:  # what it needs in the column, the exact remedy in the tooltip
                assert item.text(2) == m.status
                assert f"To use it: {m.fix}" in item.toolTip(2)
            else:
                assert item.text(2) == m.reason
            assert item.checkState(0) == Qt.CheckState.Unchecked
    dialog.check_all(True)
    every = {n for n, m in oracle.items() if m.available and m.runs_in_all}
    assert set(dialog.checked_metrics()) == every
    dialog.close()


def test_the_encoder_metrics_say_which_backend_runs_them(window, qtbot, study_with_facts) -> None:
    """BERTScore, SBERT cosine and MeaningBERT (when its weights are here) say in their row
    whether ONNX Runtime or torch runs the model, and in the tooltip why."""
    from meaningbench.jobs.metric_listing import list_metrics

    path, _ = study_with_facts
    dialog = battery_on(window, qtbot, path)
    oracle = {m.name: m for m in list_metrics(path)}
    for name in ("bertscore", "sbert_cosine"):
        item = metric_item(dialog, name)
        assert oracle[name].backend == "onnx (ONNX Runtime, CPU)"
        assert item.text(2).startswith("available · runs on onnx")
        assert "Runs on onnx (ONNX Runtime, CPU)" in item.toolTip(2)
    assert metric_item(dialog, "bleu").text(2) == "available"  # no model, no backend
    dialog.close()


def test_all_available_leaves_the_llm_judge_out_and_says_why(
    window, qtbot, study_with_facts
) -> None:
    from meaningbench.jobs.metric_specs import expand_specs

    dialog = battery_on(window, qtbot, study_with_facts[0])
    judge = metric_item(dialog, "llm_judge")
    assert judge.flags() & Qt.ItemFlag.ItemIsEnabled  # the embedded SmolLM2 can run here
    dialog.check_all(True)
    assert judge.checkState(0) == Qt.CheckState.Unchecked
    assert "llm_judge" not in dialog.checked_metrics()
    # What "All available" ticks is what `--metrics all` runs, of what can run here.
    runnable = {m.name for m in dialog.metrics if m.available}
    all_names = {s.text for s in expand_specs(["all"], [])[0]}
    assert set(dialog.checked_metrics()) == all_names & runnable
    # The row says why, in the column and in its tooltip.
    assert judge.text(2) == "available · not in All: slow: a language model per item"
    assert "“All available” leaves it out" in judge.toolTip(2)
    assert "tick it by hand" in judge.toolTip(2)
    # Ticked by hand it runs with the others, and "All available" again keeps it.
    judge.setCheckState(0, Qt.CheckState.Checked)
    dialog.check_all(True)
    assert "llm_judge" in dialog.checked_metrics()
    dialog.check_all(False)
    assert dialog.checked_metrics() == []
    dialog.close()


def test_the_source_study_battery_says_what_each_metric_needs(
    window, qtbot, study_with_facts, monkeypatch
) -> None:
    monkeypatch.delenv("MEANINGBENCH_QUESTEVAL_PYTHON", raising=False)
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    bleurt, lens, questeval = (metric_item(dialog, n) for n in ("bleurt", "lens", "questeval"))
    assert bleurt.text(2) == "needs weights" and lens.text(2) == "needs weights"
    assert "To use it: bleurt[model=PATH_OR_HUB_ID]" in bleurt.toolTip(2)
    assert "not available offline" in bleurt.toolTip(2)
    assert "To use it: lens[model=PATH_OR_HUB_ID]" in lens.toolTip(2)
    assert questeval.text(2) == "needs environment"
    assert "MEANINGBENCH_QUESTEVAL_PYTHON" in questeval.toolTip(2)
    for name in ("bleu_samsa_am", "bleu_samsa_gm"):
        item = metric_item(dialog, name)
        assert item.text(2) == "available" and item.flags() & Qt.ItemFlag.ItemIsEnabled
    dialog.close()


def test_bleurt_runs_from_the_dialog_with_a_local_model(
    window, qtbot, study_with_facts, tmp_path
) -> None:
    from meaningbench.metrics.base import Pair
    from meaningbench.metrics.neural.bleurt import BleurtMetric
    from tests.metrics.tiny_bleurt import save_tiny_bleurt

    folder = save_tiny_bleurt(tmp_path / "tiny-bleurt")
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    item = metric_item(dialog, "bleurt")
    assert not item.flags() & Qt.ItemFlag.ItemIsEnabled  # its default weights are absent
    dialog.model_combo.setEditText(folder)  # a model under Options: it can run
    assert item.flags() & Qt.ItemFlag.ItemIsEnabled
    assert item.text(2) == "uses the model under Options"
    # BLANC needs a masked LM through its own option, which the Options' model does not set
    assert not metric_item(dialog, "blanc_help").flags() & Qt.ItemFlag.ItemIsEnabled
    dialog.set_checked(["bleurt"])
    assert dialog.checked_metrics() == ["bleurt"]
    job = dialog.start()
    assert job is not None
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "done", job.failure
    assert {s.metric: s.status for s in dialog.summaries} == {"bleurt": "done"}
    stored = scores_of(path, "bleurt")
    ids = facts.item_ids[:4]
    direct = BleurtMetric(model=folder, device="cpu").score_batch(
        [Pair(i, *facts.text_of[i], (facts.text_of[i][0],)) for i in ids]
    )
    assert [stored[i] for i in ids] == pytest.approx([d.value for d in direct], abs=1e-4)
    dialog.close()


def test_running_bleu_and_chrf_fills_the_browser(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    dialog.set_checked(["bleu", "chrf"])
    dialog.batch_spin.setValue(8)
    assert dialog.options()["model"] is None  # each metric keeps its own model
    progress: list[tuple[int, int | None]] = []
    job = dialog.start()
    assert job is not None and not dialog.run_button.isEnabled()
    job.progress.connect(lambda p: progress.append((p.done, p.total)))
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "done", job.failure
    statuses = {s.metric: s.status for s in dialog.summaries}
    assert statuses == {"bleu": "done", "chrf": "done"}
    assert progress and progress[-1][0] == progress[-1][1]
    assert dialog.progress.value() == dialog.progress.maximum()
    assert "items/s" in dialog.rate_label.text()
    results = dialog.results.toPlainText().splitlines()
    assert dialog.results.isVisible() and len(results) == 2
    n_items = len(facts.item_ids) + len(facts.control_ids)  # control items are scored too
    assert all(f"done, {n_items} scored" in line for line in results), results
    # The browser grew a chrf column while the batches landed; values match sacrebleu.
    model = page.model
    qtbot.waitUntil(
        lambda: "chrf[refs=source]" in [c.column for c in model.score_columns], timeout=5000
    )  # fmt: skip
    chrf_col = next(
        i for i in range(model.columnCount())
        if model.headerData(i, Qt.Orientation.Horizontal) == "chrf\n[refs=source]"
    )  # fmt: skip
    stored = scores_of(path, "chrf")
    assert set(stored) >= set(facts.item_ids)
    for item_id in facts.item_ids[:8]:
        source, output = facts.text_of[item_id]
        oracle = sacrebleu.sentence_chrf(output, [source]).score
        assert stored[item_id] == pytest.approx(oracle, abs=1e-6)
        row = model.row_of(item_id)
        qtbot.waitUntil(lambda r=row: model.data(model.index(r, chrf_col)) is not None)
        assert model.data(model.index(row, chrf_col)) == f"{stored[item_id]:.1f}"
    assert dialog.run_button.isEnabled()
    dialog.close()


def test_cancel_keeps_what_was_scored(window, qtbot, tmp_path: Path) -> None:
    path = tmp_path / "many.mbstudy"
    bulk_study(path, 1500).close()
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    dialog.set_checked(["chrf", "ter", "rougel"])
    dialog.batch_spin.setValue(16)
    job = dialog.start()
    assert job is not None
    job.progress.connect(lambda p: p.done > 0 and dialog.cancel_button.click())
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "cancelled"
    assert "Cancelled" in dialog.phase_label.text()
    kept = {m: len(scores_of(path, m)) for m in ("chrf", "rougel", "ter")}
    assert 0 < sum(kept.values()) < 3 * 1500, kept
    assert kept["ter"] < 1500, kept  # the last metric never finished
    statuses = {s.metric: s.status for s in dialog.summaries}
    assert "cancelled" in statuses.values(), statuses
    assert dialog.run_button.isEnabled() and not dialog.cancel_button.isEnabled()
    # The status bar counts finished runs only: the cancelled one is not a metric run.
    conn = sqlite3.connect(path)
    try:
        done, cancelled = (
            conn.execute(f"SELECT COUNT(*) FROM metric_run WHERE status = '{s}'").fetchone()[0]
            for s in ("done", "cancelled")
        )
    finally:
        conn.close()
    # A metric cut short has a cancelled run; one the cancel reached before it started (the
    # child may be between two metrics when it hears it) has none.
    begun = [s for s in dialog.summaries if s.status == "cancelled" and s.run_id is not None]
    assert cancelled == len(begun), dialog.summaries
    window.refresh_counts()
    runs = counted(done, "metric run")  # "1 metric run" when one finished before the cancel
    qtbot.waitUntil(lambda: runs in window.status.counts_label.text(), timeout=10_000)
    close_error_boxes()


def test_progress_follows_the_work_not_the_items(window, qtbot, study_with_facts) -> None:
    path, _ = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    # Three lexical metrics done, the neural one not started: 75 % of the items, 2 % of
    # the work. The bar shows the work.
    dialog._on_progress(Progress(75, 100, "bertscore", work=0.02))
    bar = dialog.progress
    assert bar.value() / bar.maximum() == pytest.approx(0.02, abs=0.001)
    assert "75 / 100 items" in dialog.rate_label.text()
    dialog.close()


def test_a_failing_run_shows_a_dialog_and_the_window_goes_on(
    window, qtbot, study_with_facts
) -> None:
    from tests.ui.test_workers import error_boxes

    path, _ = study_with_facts
    open_in(window, path, qtbot)
    dialog = window.show_battery_dialog()
    wait_metrics(qtbot, dialog)
    # A metric the registry does not know: the scoring job refuses it (a user error).
    dialog.checked_metrics = lambda: ["nosuchmetric"]
    job = dialog.start()
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "failed" and job.failure.is_user_error
    qtbot.waitUntil(lambda: bool(error_boxes()))
    assert "nosuchmetric" in error_boxes()[0].text()
    assert "Failed" in dialog.phase_label.text()
    close_error_boxes()
    del dialog.checked_metrics
    dialog.set_checked(["bleu"])
    job = dialog.start()  # and the next run works
    qtbot.waitUntil(lambda: not job.running, timeout=120_000)
    assert job.outcome == "done", job.failure
