"""The scripted campaign: a lead, three raters with overlap 2 of 3 on 60 items, blind kits
out with a practice pass mark that ben fails once, rated through the rating screen's
engine, back, collected (one twice, a tampered one and one of another study refused), a
top-up for the items still short, the figures, and a disagreement review settling 3 items."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from meaningbench.annotation.practice import PracticeNotPassed, PracticeSession
from meaningbench.cli import main
from meaningbench.db.study import copy_study, open_study
from tests.kits.campaign_helpers import RATERS, held_ratings, lead_study, rate_kit, tamper

# carla rates only this many of her queue before she sends her kit back.
CARLA_RATES = 20
# Three practice items (expected 60–90, 0–20, 90–100); the pass mark is 2 of 3 within 10.
PRACTICE_CSV = (
    "source,output,low,high,explanation\n"
    "The cat sat on the mat.,The cat sat.,60,90,Only the place is lost.\n"
    "The storm closed the bridge.,The bridge opened.,0,20,The meaning is reversed.\n"
    "Rain fell all day.,Rain fell all day.,90,100,The same sentence.\n"
)
FAILING, PASSING = [0.0, 100.0, 40.0], [75.0, 25.0, 95.0]


def _practise(kit: Path, rater: str, values: list[float]) -> None:
    """One attempt at the practice in the rater's kit, offline."""
    study = open_study(kit)
    try:
        session = PracticeSession(study, rater)
        for practice, value in zip(session.pending(), values, strict=True):
            session.answer(practice, value)
    finally:
        study.close()


def _run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    code = main([*argv, "--json"])
    out = capsys.readouterr()
    assert out.out, out.err
    return code, json.loads(out.out)


def _kit_contents(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "annotators": [r[0] for r in conn.execute("SELECT name FROM annotator")],
            "ratings": one("SELECT COUNT(*) FROM rating"),
            "scores": one("SELECT COUNT(*) FROM score") + one("SELECT COUNT(*) FROM metric_run"),
            "label_settings": one(
                "SELECT COUNT(*) FROM study_setting WHERE key IN ('label_set', 'kits', 'kit_secret')"
            ),
        }
    finally:
        conn.close()


def test_a_scripted_campaign(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lead = lead_study(tmp_path / "lead.mbstudy", seed=1)
    lead.close()
    (tmp_path / "practice.csv").write_text(PRACTICE_CSV, encoding="utf-8")
    assert (
        main(["practice", str(tmp_path / "lead.mbstudy"), "--add", str(tmp_path / "practice.csv")])
        == 0
    )
    # A pass mark no practice item can reach is refused; then the lead's own.
    mark = ["protocol", str(tmp_path / "lead.mbstudy"), "--practice-pass-mark"]
    assert main([*mark, "4 of 3 within 10"]) == 2
    assert main([*mark, "2 of 3 within 10", "--practice-attempts", "2"]) == 0
    capsys.readouterr()
    other = lead_study(tmp_path / "other.mbstudy", seed=2)  # another lab's study
    other.close()
    kits, back = tmp_path / "kits", tmp_path / "returned"
    back.mkdir()

    started = time.perf_counter()
    code, made = _run_json(
        capsys,
        "kit",
        str(tmp_path / "lead.mbstudy"),
        "--raters",
        ",".join(RATERS),
        "--out",
        str(kits),
    )
    lead_seconds = time.perf_counter() - started
    assert code == 0 and [m["rater"] for m in made] == list(RATERS)
    for rater in RATERS:
        contents = _kit_contents(kits / f"{rater}.mbkit")
        assert contents == {"annotators": [rater], "ratings": 0, "scores": 0, "label_settings": 0}
        # Vacuumed: no deleted page still holds the labels' source or the lead's secret.
        raw = (kits / f"{rater}.mbkit").read_bytes()
        assert b"aggregate:published" not in raw and b"kit_secret" not in raw
    assert (
        main(
            [
                "kit",
                str(tmp_path / "other.mbstudy"),
                "--raters",
                "ana",
                "--out",
                str(tmp_path / "other-kits"),
            ]
        )
        == 0
    )
    capsys.readouterr()

    given: dict[tuple[str, str, str], float] = {}
    for rater in RATERS:
        if rater == "ben":  # fails the practice once: no rating until he passes
            _practise(kits / "ben.mbkit", rater, FAILING)
            with pytest.raises(PracticeNotPassed, match="Attempt 2 of 2"):
                rate_kit(kits / "ben.mbkit", rater)
        _practise(kits / f"{rater}.mbkit", rater, PASSING)
        given |= rate_kit(
            kits / f"{rater}.mbkit",
            rater,
            CARLA_RATES if rater == "carla" else None,
            lead=tmp_path / "lead.mbstudy",
        )
        copy_study(kits / f"{rater}.mbkit", back / f"{rater}.mbkit")  # sent back
    tamper(kits / "ben.mbkit", back / "ben-edited.mbkit")
    copy_study(tmp_path / "other-kits" / "ana.mbkit", back / "ana-other-lab.mbkit")

    started = time.perf_counter()
    code, report = _run_json(capsys, "collect", str(tmp_path / "lead.mbstudy"), str(back))
    lead_seconds += time.perf_counter() - started
    with capsys.disabled():
        print(f"\nlead's time from making kits to collected: {lead_seconds:.2f} s")
    assert code == 1  # some refused, the others collected
    refused = {Path(r["file"]).name: r["reason"] for r in report["refused"]}
    assert set(refused) == {"ben-edited.mbkit", "ana-other-lab.mbkit"}
    assert "another study" in refused["ana-other-lab.mbkit"]
    assert "changed since it was made" in refused["ben-edited.mbkit"]
    practice_added = {r["rater"]: r["practice_added"] for r in report["collected"]}
    assert practice_added == {"ana": 3, "ben": 6, "carla": 3}  # ben's two attempts
    added = {r["rater"]: r["ratings_added"] for r in report["collected"]}
    assert added == dict(Counter(a for a, _k, _kind in given))
    assert all(r["conflicts"] == [] for r in report["collected"])

    # Collected again: nothing more.
    code, again = _run_json(capsys, "collect", str(tmp_path / "lead.mbstudy"), str(back))
    assert code == 1 and [r["ratings_added"] for r in again["collected"]] == [0, 0, 0]
    # The practice came back with the kits: ben's two attempts, the others' one.
    code, practice = _run_json(capsys, "practice", str(tmp_path / "lead.mbstudy"))
    attempts = {r["rater"]: (r["attempts"], r["status"]) for r in practice}
    assert attempts == {
        "ana": ([[3, 3]], "passed on attempt 1 (3 of 3)"),
        "ben": ([[3, 0], [3, 3]], "passed on attempt 2 (0 of 3, then 3 of 3)"),
        "carla": ([[3, 3]], "passed on attempt 1 (3 of 3)"),
    }

    study = open_study(tmp_path / "lead.mbstudy")
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)  # exactly the ratings given, each once

    regular = Counter(k for _a, k, kind in given if kind == "regular")
    code, figures = _run_json(capsys, "campaign", str(tmp_path / "lead.mbstudy"))
    assert code == 0 and figures["k"] == 2
    by_key = {i["pair_key"]: i["ratings"] for i in figures["items"]}
    assert len(by_key) == 60
    assert by_key == {k: regular.get(k, 0) for k in by_key}
    raters = {r["rater"]: r for r in figures["raters"]}
    assert raters["carla"]["done"] == CARLA_RATES < raters["carla"]["assigned"]
    assert (raters["ben"]["practice_verdict"], raters["ben"]["practice_attempts"]) == (
        "passed",
        [0, 3],
    )
    assert (
        raters["ana"]["done"] == raters["ana"]["assigned"] and raters["ana"]["kits_returned"] == 1
    )
    assert raters["ana"]["identical_pass"] == 1.0
    # The quality figures are the rater checks' own, rater by rater.
    code, checks = _run_json(capsys, "raters", str(tmp_path / "lead.mbstudy"))
    for c in checks:
        mine = raters[c["rater"]]
        assert (mine["agreement_r"], mine["median_seconds"]) == (
            c["agreement_r"],
            c["median_seconds"],
        )
        assert (mine["identical_pass"], mine["unrelated_pass"]) == (
            c["identical_pass"],
            c["unrelated_pass"],
        )
    assert isinstance(raters["ana"]["agreement_r"], float)
    short = [k for k, n in by_key.items() if n < 2]
    assert short and figures["items_short"] == len(short)

    # A top-up of the short items for ana and ben; rated, collected: every item has its 2.
    code, top_up = _run_json(
        capsys,
        "kit",
        str(tmp_path / "lead.mbstudy"),
        "--top-up",
        "--raters",
        "ana,ben",
        "--out",
        str(kits),
    )
    assert code == 0 and sum(m["items"] for m in top_up) == len(short)
    for m in top_up:
        assert _kit_contents(Path(m["file"]))["ratings"] == 0  # no one's ratings travel
        more = rate_kit(Path(m["file"]), m["rater"], lead=tmp_path / "lead.mbstudy")
        assert not set(more) & set(given)
        given |= more
        copy_study(Path(m["file"]), back / Path(m["file"]).name)
    code, _report = _run_json(capsys, "collect", str(tmp_path / "lead.mbstudy"), str(back))
    code, figures = _run_json(capsys, "campaign", str(tmp_path / "lead.mbstudy"))
    assert {i["ratings"] for i in figures["items"]} == {2} and figures["items_short"] == 0
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)

    # The disagreement review: the widest gaps first, three settled, the ratings untouched.
    lead = str(tmp_path / "lead.mbstudy")
    code, review = _run_json(capsys, "disagreements", lead, "--json")
    widest = [i["item_id"] for i in review["items"]]
    assert code == 0 and widest and review["threshold_from"] == "percentile 95"
    # The lead lowers the threshold to see more of them.
    lower = f"{review['threshold'] / 2:g}"
    code, review = _run_json(capsys, "disagreements", lead, "--threshold", lower, "--json")
    gaps = [i["gap"] for i in review["items"]]
    assert code == 0 and len(gaps) >= 3 and gaps == sorted(gaps, reverse=True)
    assert min(gaps) > review["threshold"] and review["threshold_from"] == "given"
    assert [i["item_id"] for i in review["items"][: len(widest)]] == widest
    settle = [["--score", "50"], ["--keep-all"], ["--exclude", "--note", "garbled source"]]
    for item, how in zip(review["items"], settle, strict=False):
        assert len(item["ratings"]) == 2 and item["resolution"] is None
        assert main(["disagreements", lead, "--resolve", str(item["item_id"]), *how]) == 0
        assert "settled item" in capsys.readouterr().out
    code, review = _run_json(capsys, "disagreements", lead, "--threshold", lower, "--json")
    assert code == 0 and review["resolved"] == 3
    decisions = [i["resolution"]["decision"] for i in review["items"][:3]]
    assert decisions == ["score", "keep-all", "exclude"]
    study = open_study(tmp_path / "lead.mbstudy")
    try:
        held, rows = held_ratings(study)
    finally:
        study.close()
    assert held == given and rows == len(given)  # the decisions are no rater's ratings
