"""Rater kits through the ops, on a real lead's study: kits made are recorded with the
raters' queues, a collected kit's ratings come in, a kit is sent back whole, and each
refusal (kits in the way, nothing to send back) leaves the study and the folder as they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meaningbench.db.study import Study, open_study
from meaningbench.errors import UserError
from meaningbench.kits.record import kit_records
from meaningbench.ops.kits import (
    KitsInTheWay,
    collect_job,
    controls_passed,
    default_send_back_folder,
    make_kits_job,
    send_back_job,
)
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import add_ratings
from tests.kits.campaign_helpers import lead_study, rate_kit
from tests.ops.study_rows import every_row, rows

QUEUES = (
    "SELECT a.name, COUNT(*) FROM queue_entry q JOIN annotator a ON a.id = q.annotator_id "
    "GROUP BY a.name ORDER BY a.name"
)
RATED = (
    "SELECT COUNT(*) FROM rating r JOIN annotator a ON a.id = r.annotator_id "
    "WHERE a.name = ? AND r.state = 'current'"
)


@pytest.fixture
def lead(tmp_path: Path) -> Iterator[Study]:
    study = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=3)  # 6 items, k = 2
    yield study
    study.close()


def _records(study: Study) -> list[tuple[str, bool]]:
    with study.session() as s:
        return sorted((r.rater, r.top_up) for r in kit_records(s).values())


def test_kits_made_are_recorded_and_in_the_way_the_second_time(lead: Study, tmp_path: Path) -> None:
    out = tmp_path / "kits"
    wrote = make_kits_job(lead, "ana, ben", out)(JobContext())
    assert wrote.changes.settings and not wrote.changes.everything
    assert sorted(k.rater for k in wrote.value) == ["ana", "ben"]
    assert all(k.path.is_file() and k.path.parent == out for k in wrote.value)
    assert _records(lead) == [("ana", False), ("ben", False)]
    queues = dict(rows(lead.path, QUEUES))
    assert queues == {k.rater: k.items for k in wrote.value}

    before, files = every_row(lead.path), {p: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(KitsInTheWay):
        make_kits_job(lead, "ana", out)(JobContext())
    assert every_row(lead.path) == before
    assert {p: p.read_bytes() for p in out.iterdir()} == files


def test_a_collected_kit_brings_its_ratings_in(lead: Study, tmp_path: Path) -> None:
    out = tmp_path / "kits"
    made = make_kits_job(lead, "ana", out)(JobContext()).value
    given = rate_kit(made[0].path, "ana")
    wrote = collect_job(lead, out)(JobContext())
    assert wrote.changes.everything
    (back,) = wrote.value.collected
    assert back.rater == "ana" and wrote.value.new_ratings == len(given)
    assert rows(lead.path, RATED, "ana") == [(len(given),)]
    assert controls_passed(back.controls) != "no ratings"
    assert controls_passed(None) == "no ratings"


def test_a_kit_is_sent_back_whole_and_an_empty_one_is_refused(lead: Study, tmp_path: Path) -> None:
    (made,) = make_kits_job(lead, "ana", tmp_path / "kits")(JobContext()).value
    folder = tmp_path / "back"
    kit = open_study(made.path)
    try:
        with pytest.raises(UserError, match="Nothing to send back"):
            send_back_job(kit, folder)(JobContext())
        assert not folder.exists() or not any(folder.iterdir())
    finally:
        kit.close()
    given = rate_kit(made.path, "ana", limit=2)
    kit = open_study(made.path)
    try:
        sent = send_back_job(kit, folder)(JobContext())
        # The folder Send back offers: beside the kit, never the kit's own.
        beside = send_back_job(kit, default_send_back_folder(kit))(JobContext())
        with pytest.raises(UserError, match="the folder the kit is opened from"):
            send_back_job(kit, made.path.parent)(JobContext())
    finally:
        kit.close()
    assert sent.rater == "ana" and sent.ratings == len(given) == 2
    assert sent.path == folder / made.path.name and sent.path.is_file()
    assert rows(sent.path, RATED, "ana") == [(2,)]
    assert beside.path.parent == made.path.parent / "Send back"
    assert rows(beside.path, RATED, "ana") == [(2,)]
    # The lead's study is no kit: there is nothing of it to send back.
    before = every_row(lead.path)
    with pytest.raises(UserError, match="not a rater kit"):
        send_back_job(lead, tmp_path / "elsewhere")(JobContext())
    assert every_row(lead.path) == before and not (tmp_path / "elsewhere").exists()


def test_a_refused_top_up_of_a_study_never_exported_writes_nothing(tmp_path: Path) -> None:
    """Not even the study's id, which the first kit would have made."""
    study = lead_study(tmp_path / "lead.mbstudy", seed=1, n_sources=1)
    try:
        items = [i for (i,) in rows(study.path, "SELECT id FROM item WHERE kind = 'regular'")]
        add_ratings(study, "ana", dict.fromkeys(items, 50.0))
        before = every_row(study.path)
        with pytest.raises(UserError, match="ana rated or already holds"):
            make_kits_job(study, "ana", tmp_path / "kits", top_up=True)(JobContext())
        assert every_row(study.path) == before
        assert not (tmp_path / "kits").exists()
    finally:
        study.close()
