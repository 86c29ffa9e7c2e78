"""The study browser on real study files: paging, filters, search, sort, detail, live scores."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.browser.model import FIXED_COLUMNS, PAGE_SIZE
from meaningbench.ui.browser.page import HEADER_PAD
from tests.ui.conftest import open_in
from tests.ui.factories import add_scores, bulk_study

DISPLAY = Qt.ItemDataRole.DisplayRole


def all_ids(model) -> list[int]:  # noqa: ANN001
    return [model.item_id(r) for r in range(model.rowCount())]


def wait_filter(qtbot, page) -> None:  # noqa: ANN001
    page.apply_filters()
    qtbot.waitUntil(lambda: not page.model.loading, timeout=10_000)


def test_rows_and_columns_show_the_study(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    model = page.model
    assert window.current_page() == "browser"
    assert all_ids(model) == sorted(facts.item_ids)  # regular items only, by id
    assert page.count_label.text() == f"{len(facts.item_ids)} items"
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    # A score column names its metric over its options, each line as narrow as it can be.
    assert headers[-1] == "bleu\n[refs=source]"
    fm = page.table.fontMetrics()
    assert page.table.columnWidth(model.columnCount() - 1) < HEADER_PAD + fm.horizontalAdvance(
        "bleu[refs=source]"
    )
    assert model.headerData(
        model.columnCount() - 1, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole
    ).startswith("bleu[refs=source] ")
    col = {k: i for i, (k, _h, _s) in enumerate(FIXED_COLUMNS)}
    for row, item_id in enumerate(all_ids(model)):
        source, output = facts.text_of[item_id]
        assert model.data(model.index(row, col["source"])) == source
        assert model.data(model.index(row, col["output"])) == output
        assert model.data(model.index(row, col["dataset"])) == facts.dataset_of[item_id]
        values = [v for _a, v in facts.ratings.get(item_id, [])]
        n_shown = model.data(model.index(row, col["ratings"]))
        assert n_shown == (str(len(values)) if values else "")
        mean_shown = model.data(model.index(row, col["mean"]))
        assert mean_shown == (f"{statistics.fmean(values):.1f}" if values else "")
        bleu = model.data(model.index(row, len(FIXED_COLUMNS)))
        expected = facts.bleu.get(item_id)
        assert bleu == (None if expected is None else f"{expected:.1f}")
        assert (model.data(model.index(row, col["flag"])) == "⚑") == (item_id in facts.flagged)


@pytest.mark.parametrize(
    "widget_setup, expected",
    [
        (lambda p: p.dataset_combo.setCurrentIndex(p.dataset_combo.findData("beta")),
         lambda f: [i for i in f.item_ids if f.dataset_of[i] == "beta"]),
        (lambda p: p.system_combo.setCurrentIndex(p.system_combo.findData("sys2")),
         lambda f: [i for i in f.item_ids if f.system_of[i] == "sys2"]),
        (lambda p: p.rated_combo.setCurrentIndex(p.rated_combo.findData("rated")),
         lambda f: [i for i in f.item_ids if i in f.rated]),
        (lambda p: p.rated_combo.setCurrentIndex(p.rated_combo.findData("unrated")),
         lambda f: [i for i in f.item_ids if i not in f.rated]),
        (lambda p: p.flagged_check.setChecked(True),
         lambda f: [i for i in f.item_ids if i in f.flagged]),
        (lambda p: p.kind_combo.setCurrentIndex(p.kind_combo.findData("control")),
         lambda f: list(f.control_ids)),
        (lambda p: p.kind_combo.setCurrentIndex(p.kind_combo.findData("all")),
         lambda f: sorted(f.item_ids + f.control_ids)),
        (lambda p: p.search_edit.setText("NEEDLE"),
         lambda f: [i for i in f.item_ids if "needle" in f.text_of[i][1]]),
        (lambda p: p.search_edit.setText("number 1"),
         lambda f: [i for i in f.item_ids if "number 1" in f.text_of[i][0]]),
    ],
    ids=["dataset", "system", "rated", "unrated", "flagged", "control", "all-kinds",
         "search-case-insensitive", "search-source"],
)  # fmt: skip
def test_filters(window, qtbot, study_with_facts, widget_setup, expected) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    widget_setup(page)
    wait_filter(qtbot, page)
    want = sorted(expected(facts))
    assert want, "the factory must give every filter something to find"
    assert all_ids(page.model) == want
    kind_hidden = page.table.isColumnHidden(page.model.column_of("kind"))
    assert kind_hidden == (page.kind_combo.currentData() == "regular")


def test_filters_combine_and_search_escapes_wildcards(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    page.system_combo.setCurrentIndex(page.system_combo.findData("sys1"))
    page.rated_combo.setCurrentIndex(page.rated_combo.findData("rated"))
    wait_filter(qtbot, page)
    want = [i for i in facts.item_ids if facts.system_of[i] == "sys1" and i in facts.rated]
    assert all_ids(page.model) == sorted(want)
    page.search_edit.setText("%")  # a literal percent sign matches nothing here
    wait_filter(qtbot, page)
    assert page.model.rowCount() == 0
    assert page.count_label.text() == "0 items"


def test_sorting_by_score_and_by_mean(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    hh = page.table.horizontalHeader()
    hh.setSortIndicator(len(FIXED_COLUMNS), Qt.SortOrder.DescendingOrder)  # bleu
    qtbot.waitUntil(lambda: not page.model.loading and page.model.filter.sort == "score")
    ids = all_ids(page.model)
    scored = sorted(facts.bleu, key=lambda i: (-facts.bleu[i], -i))
    assert ids[: len(scored)] == scored
    assert set(ids[len(scored) :]) == set(facts.item_ids) - set(facts.bleu)  # unscored last
    hh.setSortIndicator(page.model.column_of("mean"), Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: not page.model.loading and page.model.filter.sort == "mean")
    means = {i: statistics.fmean(v for _a, v in r) for i, r in facts.ratings.items()}
    ids = all_ids(page.model)
    assert [means[i] for i in ids[: len(means)]] == sorted(means.values())
    # The flag column is not a sort key: the indicator goes back, the order stays.
    hh.setSortIndicator(page.model.column_of("flag"), Qt.SortOrder.AscendingOrder)
    assert hh.sortIndicatorSection() == page.model.column_of("mean")
    assert all_ids(page.model) == ids


def test_detail_pane_shows_ratings_scores_and_notes(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    flagged_rated = next(i for i in facts.item_ids if i in facts.flagged and i in facts.ratings)
    assert page.select_item(flagged_rated)
    text = page.detail.view.toPlainText()
    source, output = facts.text_of[flagged_rated]
    assert source in text and output in text
    assert f"Ratings ({len(facts.ratings[flagged_rated])})" in text
    for name, value in facts.ratings[flagged_rated]:
        assert name in text and f"{value:.1f}" in text
    assert "flagged" in text
    assert f"{facts.bleu[flagged_rated]:.1f}" in text
    failed = facts.item_ids[5]  # the factory's failed BLEU score shows as an error
    page.select_item(failed)
    assert "error" in page.detail.view.toPlainText()
    noted = facts.item_ids[2]
    page.select_item(noted)
    assert "check this" in page.detail.view.toPlainText()


def test_scores_appear_as_batches_land(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    model = page.model
    first = facts.item_ids[0]
    page.select_item(first)
    n_cols = model.columnCount()
    batch = {i: float(k) for k, i in enumerate(facts.item_ids[:10])}
    add_scores(path, "chrf", batch)
    window.runner.broadcast(StudyChanges.of(scores={"chrf": batch}))  # a battery's batch
    qtbot.waitUntil(lambda: model.columnCount() == n_cols + 1, timeout=5000)
    col = next(
        c for c in range(model.columnCount())
        if model.headerData(c, Qt.Orientation.Horizontal) == "chrf\n[refs=source]"
    )  # fmt: skip
    for item_id, value in batch.items():
        assert model.data(model.index(model.row_of(item_id), col)) == f"{value:.1f}"
    assert "chrf" in page.detail.view.toPlainText()
    # A second batch of the same run: no new column, the values refresh in place.
    later = {i: 50.0 for i in facts.item_ids[10:20]}
    conn_run = add_scores(path, "chrf", later)
    assert conn_run > 0
    window.runner.broadcast(StudyChanges.of(scores={"chrf": later}))
    row = model.row_of(facts.item_ids[12])
    qtbot.waitUntil(lambda: model.data(model.index(row, col)) == "50.0", timeout=5000)
    assert model.columnCount() == n_cols + 1


def test_changes_told_from_a_worker_thread_arrive_once(window, qtbot, study_with_facts) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    received: list[StudyChanges] = []
    window.context.study_changed.connect(received.append)
    batch = StudyChanges.of(scores={"ter": [facts.item_ids[0]]})

    def job(ctx):  # noqa: ANN001
        add_scores(path, "ter", {facts.item_ids[0]: 12.0})
        ctx.changed(batch)  # told mid-run, on the worker thread
        return batch | StudyChanges(runs=True)  # the result repeats it: not told twice

    handle = window.runner.start(job, title="scores")
    qtbot.waitUntil(lambda: not handle.running, timeout=5000)
    qtbot.waitUntil(lambda: len(received) == 2, timeout=5000)
    assert received == [batch, StudyChanges(runs=True)]


def test_large_study_pages_lazily(window, qtbot, tmp_path: Path) -> None:
    n = 100_000
    study = bulk_study(tmp_path / "big.mbstudy", n)
    study.close()
    started = time.perf_counter()
    open_in(window, tmp_path / "big.mbstudy", qtbot)
    page = window.page("browser")
    model = page.model
    assert model.rowCount() == n
    # Jump to the end: one page is fetched, not the rows in between.
    page.table.scrollToBottom()
    qtbot.wait(50)
    last_row = n - 1
    assert model.data(model.index(last_row, 0)) == str(n)
    assert model.cached_pages() <= 3
    page_started = time.perf_counter()
    for k in range(20):
        row = (k * 4999) % n
        assert model.data(model.index(row, 0)) == str(row + 1)
    per_page_ms = (time.perf_counter() - page_started) / 20 * 1000
    assert per_page_ms < 100, per_page_ms
    page.system_combo.setCurrentIndex(page.system_combo.findData("sys3"))
    wait_filter(qtbot, page)
    assert model.rowCount() == n // 5
    assert all(int(model.data(model.index(r, 0))) % 5 == 3 for r in range(0, n // 5, 997))
    assert time.perf_counter() - started < 20
    assert model.cached_pages() <= 48 and PAGE_SIZE == 256


def test_a_failed_load_says_so_instead_of_showing_no_items(
    window, qtbot, study_with_facts, tmp_path
) -> None:
    path, facts = study_with_facts
    open_in(window, path, qtbot)
    page = window.page("browser")
    assert page.count_label.text() == f"{len(facts.item_ids)} items"
    page.model._path = str(tmp_path / "gone" / "missing.mbstudy")  # the file went away
    wait_filter(qtbot, page)
    assert page.count_label.text().startswith("Could not read the items:")
    page.model._path = str(path)
    wait_filter(qtbot, page)
    assert page.count_label.text() == f"{len(facts.item_ids)} items"


def test_an_empty_output_is_shown_as_one(window, qtbot, tmp_path: Path) -> None:
    from meaningbench.datasets.importer import import_file
    from meaningbench.db.study import create_study
    from meaningbench.ui.browser.model import EMPTY_OUTPUT, EMPTY_OUTPUT_TIP

    data = tmp_path / "unts.tsv"
    data.write_text("source\toutput\nRain fell all day.\t\nCats sleep.\tCats nap.\n")
    path = tmp_path / "empty.mbstudy"
    with create_study(path) as study:
        import_file(study, data)
    open_in(window, path, qtbot)
    page = window.page("browser")
    model = page.model
    col = [k for k, _h, _s in FIXED_COLUMNS].index("output")
    shown = [model.data(model.index(r, col)) for r in range(model.rowCount())]
    assert shown == [EMPTY_OUTPUT, "Cats nap."]
    tip = model.data(model.index(0, col), Qt.ItemDataRole.ToolTipRole)
    assert tip == EMPTY_OUTPUT_TIP
    assert page.select_item(model.item_id(0))
    assert EMPTY_OUTPUT_TIP in page.detail.view.toPlainText()


def test_an_empty_study_says_to_import_and_the_button_opens_the_import(
    window, qtbot, tmp_path, study_with_facts
) -> None:
    from PySide6.QtWidgets import QLabel

    from meaningbench.db.study import create_study
    from meaningbench.ui.dialogs.import_file import ImportDialog

    path = tmp_path / "empty.mbstudy"
    create_study(path).close()
    window.show()
    assert window.studies.open_path(path)
    page = window.page("browser")
    qtbot.waitUntil(lambda: page.empty_hint.isVisible(), timeout=10_000)
    assert not page.table.isVisible()
    assert "no items yet" in page.empty_hint.findChild(QLabel).text()
    qtbot.mouseClick(page.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: isinstance(window._dialogs.get("import"), ImportDialog), timeout=5_000)
    window._dialogs["import"].close()
    # A study with items shows its table, never the hint.
    open_in(window, study_with_facts[0], qtbot)
    assert page.table.isVisible() and not page.empty_hint.isVisible()


def test_the_annotate_page_of_an_empty_study_offers_the_import(window, qtbot, tmp_path) -> None:
    from meaningbench.db.study import create_study
    from meaningbench.ui.dialogs.import_file import ImportDialog

    path = tmp_path / "empty.mbstudy"
    create_study(path).close()
    window.show()
    assert window.studies.open_path(path)
    assert window.show_page("annotate")
    page = window.page("annotate")
    assert "no items to rate yet" in page.message.text()
    assert page.import_button.isVisible() and not page.start_button.isVisible()
    qtbot.mouseClick(page.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: isinstance(window._dialogs.get("import"), ImportDialog), timeout=5_000)
    window._dialogs["import"].close()
