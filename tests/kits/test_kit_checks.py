"""A kit is refused when it was tampered with, and a failed `kit` leaves nothing behind."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select

from meaningbench.cli import main
from meaningbench.db.models import Rating
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.record import kit_records
from tests.kits.campaign_helpers import lead_study, rate_kit


def _edit(sql: str) -> Callable[[sqlite3.Connection], None]:
    return lambda conn: conn.execute(sql)


TAMPERING = {
    "kit id edited": _edit(
        "UPDATE study_setting SET value = json_set(value, '$.kit_id', 'f00') WHERE key = 'kit'"
    ),
    "rater renamed": _edit("UPDATE annotator SET name = 'ben'"),
    "item added": _edit(
        "INSERT INTO item (dataset_id, source, output, refs, system, source_group, pair_key, "
        "kind, meta) SELECT dataset_id, source, 'A new output.', refs, system, source_group, "
        "'k-new', kind, meta FROM item LIMIT 1"
    ),
    "another rater's ratings": _edit(
        "INSERT INTO annotator (name, kind, created_at, meta) VALUES ('eve', 'named', "
        "'2026-01-01', '{}')"
    ),
}


@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_a_tampered_kit_is_refused_and_nothing_of_it_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    lead_study(tmp_path / "lead.mbstudy", seed=1).close()
    assert (
        main(
            [
                "kit",
                str(tmp_path / "lead.mbstudy"),
                "--raters",
                "ana",
                "--out",
                str(tmp_path / "kits"),
            ]
        )
        == 0
    )
    rate_kit(tmp_path / "kits" / "ana.mbkit", "ana", 5)
    back = tmp_path / "back"
    back.mkdir()
    copy_study(tmp_path / "kits" / "ana.mbkit", back / "ana.mbkit")
    conn = sqlite3.connect(str(back / "ana.mbkit"))
    with conn:
        TAMPERING[how](conn)
    conn.close()
    capsys.readouterr()
    assert main(["collect", str(tmp_path / "lead.mbstudy"), str(back)]) == 1
    err = capsys.readouterr().err
    assert "ana.mbkit" in err and "nothing was merged" in err
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        with study.session() as s:
            assert (
                s.scalar(
                    select(func.count()).select_from(Rating).where(Rating.origin.like("merge%"))
                )
                == 0
            )
            assert all(not r.returns for r in kit_records(s).values())
    finally:
        study.close()


def test_a_study_that_is_no_kit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead_study(tmp_path / "lead.mbstudy", seed=1).close()
    back = tmp_path / "back"
    back.mkdir()
    copy_study(tmp_path / "lead.mbstudy", back / "copy.mbkit")
    assert main(["collect", str(tmp_path / "lead.mbstudy"), str(back)]) == 1
    assert "copy.mbkit: not a rater kit" in capsys.readouterr().err


def test_a_failed_kit_command_writes_no_kit_and_records_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead_study(tmp_path / "lead.mbstudy", seed=1).close()
    out = tmp_path / "kits"
    # The second name is the published labels, no rater: refused after ana's kit was planned.
    code = main(
        [
            "kit",
            str(tmp_path / "lead.mbstudy"),
            "--raters",
            "ana,aggregate:published",
            "--out",
            str(out),
        ]
    )
    assert code == 2 and "not a rater" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        with study.session() as s:
            assert kit_records(s) == {}
    finally:
        study.close()


def test_kits_are_listed_with_their_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lead_study(tmp_path / "lead.mbstudy", seed=1).close()
    capsys.readouterr()
    assert (
        main(
            [
                "kit",
                str(tmp_path / "lead.mbstudy"),
                "--raters",
                "ana,ben",
                "--out",
                str(tmp_path / "k"),
                "--json",
            ]
        )
        == 0
    )
    made = json.loads(capsys.readouterr().out)
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        with study.session() as s:
            records = kit_records(s)
    finally:
        study.close()
    assert {m["kit_id"]: m["rater"] for m in made} == {k: r.rater for k, r in records.items()}


def test_a_kit_not_rated_yet_is_no_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead_study(tmp_path / "lead.mbstudy", seed=1).close()
    kits = tmp_path / "kits"
    assert (
        main(["kit", str(tmp_path / "lead.mbstudy"), "--raters", "ana,ben", "--out", str(kits)])
        == 0
    )
    rate_kit(kits / "ben.mbkit", "ben", 3)
    capsys.readouterr()
    assert main(["collect", str(tmp_path / "lead.mbstudy"), str(kits)]) == 0
    out = capsys.readouterr().out
    assert (
        "ana.mbkit (ana): no ratings in it yet" in out and "ben.mbkit (ben): 3 new ratings" in out
    )
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        with study.session() as s:
            returned = {r.rater: len(r.returns) for r in kit_records(s).values()}
    finally:
        study.close()
    assert returned == {"ana": 0, "ben": 1}
