"""Top-up kits through the Campaign page's op, on a real lead's study: the items still short
of their k ratings go to a new rater's kit, recorded with the rater's queue, and a top-up no
rater can take is refused with the study as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.kits.record import kit_records
from meaningbench.ops.campaign import top_up_job
from meaningbench.ops.kits import collect_job, make_kits_job
from meaningbench.runtime import JobContext
from tests.kits.campaign_helpers import lead_study, rate_kit
from tests.ops.study_rows import every_row, rows

QUEUE = (
    "SELECT q.item_id FROM queue_entry q JOIN annotator a ON a.id = q.annotator_id "
    "WHERE a.name = ? ORDER BY q.item_id"
)
SHORT = (
    "SELECT i.id FROM item i WHERE i.kind = 'regular' AND (SELECT COUNT(*) FROM rating r "
    "JOIN annotator a ON a.id = r.annotator_id WHERE r.item_id = i.id AND a.kind = 'named' "
    "AND r.state = 'current') < 2 ORDER BY i.id"
)


@pytest.fixture
def lead(tmp_path: Path) -> Iterator[Study]:
    """Kits made for ana and ben; ana rated hers and it was collected, ben's is still out."""
    study = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=3)  # 6 items, k = 2
    made = make_kits_job(study, "ana, ben", tmp_path / "kits")(JobContext()).value
    rate_kit(next(k.path for k in made if k.rater == "ana"), "ana")
    collect_job(study, tmp_path / "kits")(JobContext())
    yield study
    study.close()


def test_a_top_up_gives_the_short_items_to_a_new_rater(lead: Study, tmp_path: Path) -> None:
    short = [i for (i,) in rows(lead.path, SHORT)]
    assert short
    wrote = top_up_job(lead.path, ["cat"], tmp_path / "top-up")(JobContext())
    assert wrote.changes.settings and not wrote.changes.ratings
    (kit,) = wrote.value
    assert kit.rater == "cat" and kit.top_up and kit.path.is_file()
    queued = [i for (i,) in rows(lead.path, QUEUE, "cat")]
    assert queued == short  # each short item lacks one rating: cat holds every one
    with lead.session() as s:
        assert [r.rater for r in kit_records(s).values() if r.top_up] == ["cat"]


def test_a_top_up_no_rater_can_take_writes_nothing(lead: Study, tmp_path: Path) -> None:
    top_up_job(lead.path, ["cat"], tmp_path / "first")(JobContext())
    before = every_row(lead.path)
    # cat holds every short item now: a second top-up has nothing to give.
    with pytest.raises(UserError, match="short"):
        top_up_job(lead.path, ["cat"], tmp_path / "second")(JobContext())
    assert every_row(lead.path) == before
    assert not (tmp_path / "second").exists()
