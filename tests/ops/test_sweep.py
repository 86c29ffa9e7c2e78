"""A sweep through its op, on a real rated study with a tiny encoder built from a config:
each configuration is a stored run with a score per item, the table ranks them against the
human ratings, the result names the runs' lists; a refused sweep writes nothing."""

from __future__ import annotations

import pytest

from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.ops.sweep import SweepRequest, sweep_job
from meaningbench.runtime import Cancelled, JobContext
from meaningbench.runtime.changes import StudyChanges
from tests.metrics.neural.conftest import minilm_path, tiny_encoder  # noqa: F401
from tests.ops.study_rows import every_row, rows
from tests.training.conftest import add_rated_items, synthetic_rows

RUNS = (
    "SELECT r.status, COUNT(s.id), COUNT(s.value) FROM metric_run r "
    "LEFT JOIN score s ON s.run_id = r.id GROUP BY r.id ORDER BY r.id"
)


@pytest.fixture
def rated(new_study: Study) -> Study:
    with new_study.session() as s:
        add_rated_items(s, synthetic_rows(6, 2))  # 12 rated items
    return new_study


def test_each_configuration_is_a_stored_run_and_the_table_ranks_them(
    rated: Study,
    tiny_encoder: str,  # noqa: F811
) -> None:
    request = SweepRequest(rated.path, [tiny_encoder], "1-2")
    wrote = sweep_job(JobContext(), request, n_boot=50)
    assert wrote.changes == StudyChanges(runs=True)
    assert rows(rated.path, RUNS) == [("done", 12, 12), ("done", 12, 12)]
    table = wrote.value
    assert len(table.rows) == 2 and table.n_items == 12
    assert sum(r.best for r in table.rows) == 1
    assert set(table.extra["statuses"].values()) == {"done"}
    # Swept again, the runs are found stored: no new run.
    again = sweep_job(JobContext(), request, n_boot=50)
    assert set(again.value.extra["statuses"].values()) == {"cached"}
    assert len(rows(rated.path, RUNS)) == 2


def test_a_refused_sweep_writes_nothing(rated: Study, tiny_encoder: str) -> None:  # noqa: F811
    before = every_row(rated.path)
    request = SweepRequest(rated.path, [tiny_encoder], "1", ["references"])
    with pytest.raises(UserError, match="no item of the study has a human reference"):
        sweep_job(JobContext(), request, n_boot=50)
    assert every_row(rated.path) == before


def test_a_sweep_cancelled_before_it_began_writes_nothing(
    rated: Study,
    tiny_encoder: str,  # noqa: F811
) -> None:
    before = every_row(rated.path)
    ctx = JobContext()
    ctx.cancel.cancel()
    with pytest.raises(Cancelled):
        sweep_job(ctx, SweepRequest(rated.path, [tiny_encoder], "1-2"), n_boot=50)
    assert every_row(rated.path) == before
