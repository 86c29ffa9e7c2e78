"""Live rater checks on a study rated through the annotation engine: a careful rater and a
straight-lining, hurried one, with hidden controls; agreement checked against scipy."""

from __future__ import annotations

import json
import random
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from meaningbench.analysis.rater_checks import RaterThresholds, study_rater_checks
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import QCMix, load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.models import Item, utcnow
from meaningbench.db.study import create_study, open_study
from tests.annotation.factories import add_items


def _quality(item: Item, rng: random.Random) -> float:
    if item.kind == "control-identical":
        return 100.0
    if item.kind == "control-unrelated":
        return 0.0
    if item.kind == "control-degraded":
        return 15.0
    base = (item.parent_id or item.id) * 37 % 101
    return float(min(100, max(0, base + rng.randint(-4, 4))))


@pytest.fixture(scope="module")
def study_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("raters") / "r.mbstudy"
    st = create_study(path)
    try:
        add_items(st, 20, 2)
        with st.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 8, True
            cfg.qc = QCMix(degraded=10, identical=10, repeat=5, unrelated=10, word_soup=0)
            save_settings(s, cfg)
        # ann and bo are careful, cy gives 50 to everything in a hurry, dee guesses.
        for name, careful in (("ann", True), ("bo", True), ("cy", False), ("dee", None)):
            rng = random.Random(name)
            sess = AnnotationSession(st, name)
            while (shown := sess.next_item()) is not None:
                with st.session() as s:
                    item = s.get(Item, shown.item_id)
                    if careful is None:
                        value = float(rng.randint(0, 100))
                    else:
                        value = _quality(item, rng) if careful else 50.0
                now = utcnow()
                spent = timedelta(seconds=1 if careful is False else 12)
                sess.submit(
                    shown.item_id, {"meaning": value}, shown_at=now - spent, submitted_at=now
                )
    finally:
        st.close()
    return path


def test_a_straight_lining_hurried_rater_is_warned_about_and_careful_ones_are_not(
    study_path,
) -> None:
    st = open_study(study_path)
    try:
        checks = {c.rater: c for c in study_rater_checks(st)}
    finally:
        st.close()
    assert checks["ann"].warnings == [] and checks["bo"].warnings == []
    cy = checks["cy"]
    assert cy.same_share == 1.0 and cy.median_seconds == pytest.approx(1.0)
    text = " | ".join(cy.warnings)
    assert "straight-lining" in text and "median 1.0 s per item" in text
    assert "identical controls passed 0%" in text and "unrelated controls passed 0%" in text
    assert checks["ann"].identical_pass == 1.0 and checks["ann"].unrelated_pass == 1.0
    assert checks["ann"].weight > 0.9 and checks["cy"].weight < 0.5


def test_agreement_is_leave_one_rater_out_pearson_as_scipy_computes_it(study_path) -> None:
    st = open_study(study_path)
    try:
        checks = {c.rater: c for c in study_rater_checks(st)}
        import sqlite3

        conn = sqlite3.connect(study_path)
        rows = conn.execute(
            "SELECT r.item_id, a.name, AVG(r.value) FROM rating r JOIN annotator a "
            "ON a.id = r.annotator_id JOIN item i ON i.id = r.item_id WHERE r.state = 'current' "
            "AND i.kind = 'regular' GROUP BY r.item_id, a.name"
        ).fetchall()
        conn.close()
    finally:
        st.close()
    by_item: dict[int, dict[str, float]] = {}
    for item_id, name, value in rows:
        by_item.setdefault(item_id, {})[name] = value
    mine, others = [], []
    for values in by_item.values():
        if "ann" in values and len(values) >= 2:
            mine.append(values["ann"])
            others.append(np.mean([v for k, v in values.items() if k != "ann"]))
    assert checks["ann"].agreement_n == len(mine)
    assert checks["ann"].agreement_r == pytest.approx(stats.pearsonr(mine, others).statistic)


def test_thresholds_are_stored_per_study_and_change_the_warnings(
    study_path, tmp_path, capsys
) -> None:
    copy = tmp_path / "copy.mbstudy"
    copy.write_bytes(study_path.read_bytes())
    assert main(["raters", str(copy), "--threshold", "min_median_seconds=20", "--json"]) == 0
    checks = {c["rater"]: c for c in json.loads(capsys.readouterr().out)}
    assert any("below 20 s" in w for w in checks["ann"]["warnings"])
    st = open_study(copy)
    try:
        with st.session() as s:
            assert load_settings(s).rater_thresholds == {"min_median_seconds": 20.0}
        again = {c.rater: c for c in study_rater_checks(st, thresholds=RaterThresholds())}
        assert again["ann"].warnings == []
    finally:
        st.close()
    assert main(["raters", str(copy), "--threshold", "speed=3"]) == 2


def test_correlate_weighted_raters_uses_the_weighted_mean_over_raters(
    study_path, tmp_path, capsys
) -> None:
    import sqlite3

    import pandas as pd

    copy = tmp_path / "w.mbstudy"
    copy.write_bytes(study_path.read_bytes())
    assert main(["score", str(copy), "--metrics", "bleu", "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["correlate", str(copy), "--boot", "0", "--json", "--weighted-raters"]) == 0
    weighted = json.loads(capsys.readouterr().out)
    assert main(["correlate", str(copy), "--boot", "0", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    weights = weighted["rater_weights"]
    assert set(weights) == {"ann", "bo", "cy", "dee"}
    assert weights["cy"] < weights["ann"] and weights["dee"] < weights["ann"]
    out = tmp_path / "items.csv"
    assert main(["export", str(copy), str(out)]) == 0
    capsys.readouterr()
    items = pd.read_csv(out)
    column = next(c for c in items.columns if c.startswith("bleu"))
    conn = sqlite3.connect(copy)
    per_rater = pd.read_sql_query(
        "SELECT r.item_id, a.name AS rater, AVG(r.value) AS value FROM rating r "
        "JOIN annotator a ON a.id = r.annotator_id JOIN item i ON i.id = r.item_id "
        "WHERE r.state = 'current' AND i.kind = 'regular' GROUP BY r.item_id, a.name",
        conn,
    )
    conn.close()
    per_rater["w"] = per_rater["rater"].map(weights)
    per_rater["wv"] = per_rater["w"] * per_rater["value"]
    sums = per_rater.groupby("item_id")[["wv", "w"]].sum()
    human = (sums["wv"] / sums["w"]).rename("human")
    both = items.set_index("item_id")[[column]].join(human, how="inner").dropna()
    expected = stats.pearsonr(both[column], both["human"]).statistic
    got = weighted["metrics"][column]["pearson"]
    assert got == pytest.approx(expected, abs=1e-12)
    assert got != pytest.approx(plain["metrics"][column]["pearson"], abs=1e-6)
