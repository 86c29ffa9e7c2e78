"""`kit` again into the same folder, a kit made for a rater who already did the practice, a
kit given as the lead's study, and what a kit holds of the lead's files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.practice import PracticeSession, add_practice
from meaningbench.annotation.session import AnnotationSession
from meaningbench.cli import main
from meaningbench.datasets.importer import import_file
from meaningbench.db.models import Annotator, Item, Rating
from meaningbench.db.study import Study, copy_study, create_study, open_study
from meaningbench.kits.campaign import campaign
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.record import kit_records
from tests.cluster.helpers import query
from tests.fault_tools import file_digest
from tests.kits.campaign_helpers import lead_study, rate_kit
from tests.kits.campaign_study import campaign_study


def _kit(capsys: pytest.CaptureFixture[str], lead: Path, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["kit", str(lead), *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def _records(path: Path) -> dict[str, int]:
    """Each rater's kit records in the lead's study."""
    study = open_study(path)
    try:
        with study.session() as s:
            records = list(kit_records(s).values())
    finally:
        study.close()
    out: dict[str, int] = {}
    for r in records:
        out[r.rater] = out.get(r.rater, 0) + 1
    return out


def _kits_sent_returned(path: Path) -> dict[str, tuple[int, int]]:
    study = open_study(path)
    try:
        figures = campaign(study)
    finally:
        study.close()
    return {r.rater: (r.kits_sent, r.kits_returned) for r in figures.raters}


def test_a_kit_holding_ratings_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    kits = tmp_path / "kits"
    assert _kit(capsys, lead, "--raters", "ana,ben", "--out", str(kits))[0] == 0
    # ana rates in the kit where it lies; her 30 ratings are not collected yet.
    rate_kit(kits / "ana.mbkit", "ana", 30)
    before = file_digest(kits / "ana.mbkit"), file_digest(kits / "ben.mbkit")
    for extra in ((), ("--replace",)):
        code, said = _kit(capsys, lead, "--raters", "ana,ben,zoe", "--out", str(kits), *extra)
        assert code == 2 and "Traceback" not in said, said
        assert "ana.mbkit" in said and "30 ratings" in said and "never replaced" in said
        assert (file_digest(kits / "ana.mbkit"), file_digest(kits / "ben.mbkit")) == before
        assert _records(lead) == {"ana": 1, "ben": 1}
        assert not (kits / "zoe.mbkit").exists()
        # Nothing changed in the lead's study either: no rater, no queue for zoe.
        assert query(lead, "SELECT name FROM annotator WHERE name = 'zoe'") == []
    # Into another folder it is made (the 30 ratings are still safe in the first one).
    assert _kit(capsys, lead, "--raters", "ana", "--out", str(tmp_path / "again"))[0] == 0


def test_a_kit_is_replaced_only_when_asked_and_counted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    kits = tmp_path / "kits"
    code, said = _kit(capsys, lead, "--raters", "ana", "--out", str(kits))
    assert code == 0 and said.splitlines()[-1].startswith("1 kit written;"), said
    first = file_digest(kits / "ana.mbkit")

    code, said = _kit(capsys, lead, "--raters", "ana", "--out", str(kits))
    errors = [line for line in said.splitlines() if ": error: " in line]
    assert code == 2 and len(errors) == 1, said
    assert "ana.mbkit is already there" in errors[0] and "--replace replaces it," in errors[0]
    assert file_digest(kits / "ana.mbkit") == first and _records(lead) == {"ana": 1}

    assert _kit(capsys, lead, "--raters", "ana", "--out", str(kits), "--replace")[0] == 0
    assert file_digest(kits / "ana.mbkit") != first and _records(lead) == {"ana": 2}
    # The kit made again is the same round: one kit sent, and once back, one returned.
    assert _kits_sent_returned(lead) == {"ana": (1, 0)}
    rate_kit(kits / "ana.mbkit", "ana", 5)
    back = tmp_path / "back"
    back.mkdir()
    copy_study(kits / "ana.mbkit", back / "ana.mbkit")
    study = open_study(lead)
    try:
        assert collect_kits(study, back).collected[0].merge.ratings_added == 5
    finally:
        study.close()
    assert _kits_sent_returned(lead) == {"ana": (1, 1)}


def _practise(kit: Path, rater: str) -> int:
    """The rater answers the kit's practice as the practice screen does; returns how many."""
    study = open_study(kit)
    try:
        session = PracticeSession(study, rater)
        pending = session.pending()
        for practice in pending:
            session.answer(practice, (practice.low + practice.high) / 2)
        return len(pending)
    finally:
        study.close()


def _pending_practice(kit: Path, rater: str) -> int:
    study = open_study(kit)
    try:
        return len(PracticeSession(study, rater).pending())
    finally:
        study.close()


def test_a_top_up_asks_no_practice_of_a_rater_who_did_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def practise(kit: Path) -> None:
        assert _practise(kit, kit.stem) == 2

    def with_practice(study: Study) -> None:
        add_practice(study, [("A cat sat.", "A cat sat.", 80, 100, ""), ("Big.", "No.", 0, 20, "")])

    lead = campaign_study(tmp_path, rated=practise, prepare=with_practice)
    code, said = _kit(
        capsys, lead, "--top-up", "--raters", "ana,dana", "--out", str(tmp_path / "top")
    )
    assert code == 0, said
    (ana,) = (tmp_path / "top").glob("ana-top-up-*.mbkit")
    (dana,) = (tmp_path / "top").glob("dana-top-up-*.mbkit")
    assert _pending_practice(ana, "ana") == 0  # she passed it in her first kit
    assert _pending_practice(dana, "dana") == 2  # a new rater practises first
    # The next top-up is her second round; each round is counted once.
    assert _kits_sent_returned(lead)["ana"] == (2, 1)


def test_a_kit_is_refused_as_the_leads_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    assert _kit(capsys, lead, "--raters", "ana", "--out", str(tmp_path / "kits"))[0] == 0
    kit = tmp_path / "kits" / "ana.mbkit"
    before = file_digest(kit)
    code, said = _kit(capsys, kit, "--raters", "ben", "--out", str(tmp_path / "more"))
    errors = [line for line in said.splitlines() if ": error: " in line]
    assert code == 2 and len(errors) == 1 and "Traceback" not in said, said
    assert "ana.mbkit" in errors[0] and "a rater's kit" in errors[0]
    assert not (tmp_path / "more").exists()
    assert file_digest(kit) == before


def test_a_kit_holds_no_item_attribute_and_no_path_of_the_leads_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "lead-files" / "pairs.csv"
    data.parent.mkdir()
    rows = [
        f"The source sentence number {i} is long enough.,Output {i}.,GOLDLABEL{i}x,topic{i}z"
        for i in range(12)
    ]
    data.write_text("source,output,gold_label,secret_topic\n" + "\n".join(rows) + "\n")
    lead = tmp_path / "lead.mbstudy"
    study = create_study(lead)
    try:
        import_file(study, data)
    finally:
        study.close()
    dump = _dump(lead)  # the lead's study holds both, so the test can see them missing
    assert "GOLDLABEL3x" in dump and "secret_topic" in dump and str(data.parent) in dump

    assert _kit(capsys, lead, "--raters", "ana", "--out", str(tmp_path / "kits"))[0] == 0
    kit = tmp_path / "kits" / "ana.mbkit"
    dump = _dump(kit)
    raw = kit.read_bytes()
    for found in (dump, raw.decode("latin-1")):
        assert "GOLDLABEL" not in found and "topic" not in found and "gold_label" not in found
        assert str(data.parent) not in found and "pairs.csv" not in found
    assert "Output 3." in dump  # the items are there
    assert rate_kit(kit, "ana", 3)  # and the kit is rated as before


def _dump(path: Path) -> str:
    """Every row of every table, as plain sqlite3 reads it."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def test_a_top_up_with_no_rater_free_names_the_short_items_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    study = lead_study(lead, seed=1, n_sources=1)  # 2 items, k = 2
    try:
        with study.session(write=True) as s:
            ana, ben = Annotator(name="ana", kind="named"), Annotator(name="ben", kind="named")
            s.add_all([ana, ben])
            s.flush()
            items = list(s.scalars(select(Item.id).where(Item.kind == "regular")))
            given = [(ana, items[0]), (ana, items[1]), (ben, items[0])]
            s.add_all(
                Rating(item_id=i, annotator_id=a.id, dimension_id=1, value=50.0) for a, i in given
            )
    finally:
        study.close()
    code, said = _kit(capsys, lead, "--top-up", "--raters", "ana", "--out", str(tmp_path / "k"))
    assert code == 2, said
    assert "1 item is short of their ratings, but ana rated or already holds" in said


def test_a_kit_open_for_rating_is_never_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1).close()
    kits = tmp_path / "kits"
    assert _kit(capsys, lead, "--raters", "ana", "--out", str(kits))[0] == 0
    kit = open_study(kits / "ana.mbkit")  # the rater's app holds it open
    try:
        session = AnnotationSession(kit, "ana")
        shown = session.current()
        assert shown is not None
        session.submit(shown.item_id, {"meaning": 40.0})  # in the kit's log, not yet its file
        assert (kits / "ana.mbkit-wal").stat().st_size > 0
        code, said = _kit(capsys, lead, "--raters", "ana", "--out", str(kits), "--replace")
        assert code == 2 and "open in MeaningBench" in said and "never replaced" in said, said
    finally:
        kit.close()
    assert query(kits / "ana.mbkit", "SELECT value FROM rating") == [(40.0,)]
