"""The dashboard's view state on a real study file: score batches are read by their ids and
leave the analysis as a full reread would, to the last digit."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from sqlalchemy import event

from meaningbench.analysis.live import StudyAnalysis
from meaningbench.db.models import MetricRun, Score
from meaningbench.queries.dashboard_state import NOTHING, RELOAD, DashboardState, Redraw
from meaningbench.runtime import JobContext
from meaningbench.runtime.changes import StudyChanges
from tests.analysis.studybuild import add_ratings

BLEU_HASH = "h" * 16  # the hash of the populated study's BLEU run


def _run(
    study,  # noqa: ANN001
    metric: str,
    config_hash: str,
    values: dict[int, float | None],
    *,
    errors: tuple[int, ...] = (),
) -> None:
    """A run committed as the battery commits one: scores, and failures for `errors`."""
    with study.session(write=True) as s:
        run = MetricRun(
            metric=metric, config={}, config_hash=config_hash, label=metric, status="done"
        )
        s.add(run)
        s.flush()
        s.add_all(Score(run_id=run.id, item_id=i, value=v, raw=v) for i, v in values.items())
        s.add_all(Score(run_id=run.id, item_id=i, value=None, error="boom") for i in errors)


def _loaded(study) -> DashboardState:  # noqa: ANN001
    state = DashboardState()
    state.study = study
    state.install(state.load_job(study.path)(JobContext()))
    return state


def _bleu(state: DashboardState) -> str:
    """The BLEU run's column, as the battery labels its batches (its canonical name)."""
    return next(name for name in state.metric_names if name.startswith("bleu"))


def _batch(label: str, ids: list[int]) -> StudyChanges:
    return StudyChanges.of(scores={label: ids})


def _assert_same_as_a_reread(state: DashboardState, study) -> None:  # noqa: ANN001
    fresh = StudyAnalysis.from_study(study, "meaning")
    live = state.analysis
    assert live is not None
    assert live.metric_names == fresh.metric_names
    # To the last digit: NaN where a reread has NaN, every other value equal.
    np.testing.assert_array_equal(live.data.metric_values, fresh.data.metric_values)
    ours = state.live_table(kendall=True)
    theirs = fresh.correlations(n_boot=0, kendall=True)
    assert ours is not None and list(ours.results) == list(theirs.results)
    for name, r in theirs.results.items():
        for key in ("pearson", "spearman", "kendall", "r2", "n"):
            a, b = getattr(ours.results[name], key), getattr(r, key)
            assert a == b or (math.isnan(a) and math.isnan(b)), (name, key)


def test_score_batches_leave_what_a_full_reread_reads(study_with_facts) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    ids = facts.item_ids
    version = state.version
    # A new metric, in two batches; the second has an item scored NaN and one that failed.
    _run(study, "newmetric", "n1", {i: float(k % 9) / 3 for k, i in enumerate(ids[:20])})
    assert state.apply(_batch("newmetric", ids[:20])) == Redraw(scores=True, metrics=True)
    assert state.version == version + 1
    later = {i: float(k) * 1.5 for k, i in enumerate(ids[20:40])}
    later[ids[25]] = float("nan")  # SQLite stores it as NULL: no value
    _run(study, "newmetric", "n1", later, errors=(ids[41],))
    assert state.apply(_batch("newmetric", [*ids[20:40], ids[41]])) == Redraw(scores=True)
    _assert_same_as_a_reread(state, study)
    # BLEU rescored: new values for some items; a failure leaves the old score counting.
    _run(study, "bleu", BLEU_HASH, {i: 7.25 for i in ids[:5]}, errors=(ids[6],))
    assert state.apply(_batch(_bleu(state), [*ids[:5], ids[6]])) == Redraw(scores=True)
    _assert_same_as_a_reread(state, study)
    assert state.heatmap("pearson") is not None
    assert "newmetric" in state.heatmap("pearson").columns


def test_a_batch_of_nothing_that_counts_adds_no_column(study_with_facts) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    _run(study, "broken", "b1", {}, errors=tuple(facts.item_ids[:3]))
    assert state.apply(_batch("broken", facts.item_ids[:3])) == NOTHING
    _assert_same_as_a_reread(state, study)


@pytest.fixture
def statements(study_with_facts) -> Iterator[list[tuple[str, object]]]:
    """Every SQL statement the study's engine runs, with its parameters."""
    study, _facts = study_with_facts
    seen: list[tuple[str, object]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:  # noqa: ANN001
        seen.append((statement, parameters))

    event.listen(study.engine, "before_cursor_execute", record)
    yield seen
    event.remove(study.engine, "before_cursor_execute", record)


def _reads(seen: list[tuple[str, object]]) -> list[tuple[str, object]]:
    return [(sql, p) for sql, p in seen if sql.lstrip().upper().startswith("SELECT")]


def test_a_batch_reads_its_items_only(study_with_facts, statements) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    batch = facts.item_ids[10:17]
    _run(study, "bleu", BLEU_HASH, {i: 1.0 for i in batch})
    statements.clear()
    assert state.apply(_batch(_bleu(state), batch)) == Redraw(scores=True)
    reads = _reads(statements)
    # The run names (runs, registered models) and one read of the batch's scores; no
    # ratings, no items, no other scores.
    assert len(reads) <= 3, [sql for sql, _ in reads]
    on_scores = [(sql, p) for sql, p in reads if " score s " in sql]
    assert len(on_scores) == 1
    params = on_scores[0][1]
    assert isinstance(params, (tuple, list))
    assert sorted(v for v in params if isinstance(v, int)) == sorted(batch)
    assert not any("rating" in sql for sql, _ in reads)
    _assert_same_as_a_reread(state, study)


def test_a_large_batch_is_read_in_chunks(statements, study_with_facts) -> None:
    from meaningbench.analysis.score_columns import ITEM_CHUNK

    study, facts = study_with_facts
    state = _loaded(study)
    # More ids than one IN list takes: the items a batch names need not all be regular
    # items of this study (the state sets only those it has).
    named = [*facts.item_ids, *range(10_000, 10_000 + 2 * ITEM_CHUNK)]
    _run(study, "bleu", BLEU_HASH, {i: 3.0 for i in facts.item_ids[::2]})
    statements.clear()
    assert state.apply(_batch(_bleu(state), named)) == Redraw(scores=True)
    on_scores = [sql for sql, _ in _reads(statements) if " score s " in sql]
    assert len(on_scores) == math.ceil(len(named) / ITEM_CHUNK)
    _assert_same_as_a_reread(state, study)


def test_a_run_renamed_under_a_known_column_reads_everything_again(study_with_facts) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    # The end of a battery names no ids; with no column's run changed, nothing to do.
    assert state.apply(StudyChanges(runs=True)) == NOTHING
    # BLEU under another configuration hash: the older run becomes "bleu (older 1)".
    _run(study, "bleu", "other-hash", {facts.item_ids[0]: 50.0})
    assert state.apply(_batch(_bleu(state), facts.item_ids[:1])) == RELOAD
    assert state.apply(StudyChanges(runs=True)) == RELOAD


def test_wholesale_changes_read_everything_again(study_with_facts) -> None:
    study, _facts = study_with_facts
    state = _loaded(study)
    for changes in (
        StudyChanges(settings=True),
        StudyChanges(everything=True),
        StudyChanges.of(label_sets=["aggregate:alpha"]),
        StudyChanges.of(items=[1]),
    ):
        assert state.apply(changes) == RELOAD


def test_changes_told_while_the_study_is_read_are_applied_again(study_with_facts) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    job = state.load_job(study.path)
    loaded = job(JobContext())  # the read ends before the batch and the rating commit
    _run(study, "latecomer", "l1", {i: float(i % 5) for i in facts.item_ids[:30]})
    unrated = next(i for i in facts.item_ids if i not in facts.rated)
    add_ratings(study, "ann1", {unrated: 42.0})
    state.apply(_batch("latecomer", facts.item_ids[:30]) | StudyChanges.of(ratings=[unrated]))
    state.install(loaded)
    assert "latecomer" in state.metric_names
    _assert_same_as_a_reread(state, study)
    raw, _ = state.analysis.human()
    assert raw[list(state.analysis.data.item_ids).index(unrated)] == 42.0


def test_ratings_redraw_the_statistics_or_only_rater_qc(study_with_facts) -> None:
    study, facts = study_with_facts
    state = _loaded(study)
    version = state.version
    unrated = next(i for i in facts.item_ids if i not in facts.rated)
    add_ratings(study, "ann1", {unrated: 42.0})
    assert state.apply(StudyChanges.of(ratings=[unrated])) == Redraw(ratings=True)
    assert state.version == version + 1
    add_ratings(study, "ann1", {facts.control_ids[0]: 80.0})
    assert state.apply(StudyChanges.of(ratings=[facts.control_ids[0]])) == Redraw(quality=True)
    assert state.version == version + 1
    _assert_same_as_a_reread(state, study)
