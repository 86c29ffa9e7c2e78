"""BLEU-SAMSA: the arithmetic and geometric means of the stored BLEU and SAMSA scores."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from meaningbench.jobs.base import JobContext
from meaningbench.jobs.scene_import import import_ucca
from meaningbench.jobs.scoring import ScoreRequest, score_study
from meaningbench.metrics.base import Pair
from meaningbench.metrics.structural.bleu_samsa import (
    BleuSamsaAmMetric,
    BleuSamsaGmMetric,
    arithmetic_mean,
    geometric_mean,
)
from tests.jobs.studydata import add_items

DATA = Path(__file__).parent / "structural" / "data"
STORM = "After the storm passed, the old fisherman repaired his boat and sailed to Port Isaac."
SPLIT = "The storm passed. The old fisherman repaired his boat. He sailed to Port Isaac."
SPECS = [
    "bleu",
    "samsa[embeddings=false]",
    "bleu_samsa_am[samsa_embeddings=false]",
    "bleu_samsa_gm[samsa_embeddings=false]",
]


def test_hand_values() -> None:
    assert arithmetic_mean(40.0, 90.0) == 65.0
    assert geometric_mean(40.0, 90.0) == pytest.approx(60.0)
    assert geometric_mean(0.0, 90.0) == 0.0
    assert arithmetic_mean(100.0, 100.0 / 3) == pytest.approx(200.0 / 3)


def test_means_of_given_values_on_both_scales() -> None:
    pair = Pair(7, "s", "o", ("s",))
    am, gm = BleuSamsaAmMetric(), BleuSamsaGmMetric()
    am.use_stored(lambda pairs: {7: (25.0, 64.0)})
    gm.use_stored(lambda pairs: {7: (25.0, 64.0)})
    (a,), (g,) = am.score_batch([pair]), gm.score_batch([pair])
    assert (a.value, a.raw) == pytest.approx((44.5, 0.445))
    assert (g.value, g.raw) == pytest.approx((40.0, 0.40))
    assert a.details == {"bleu": 25.0, "samsa": 64.0}


def _stored(study, metric: str) -> dict[int, tuple[float | None, str | None]]:
    with study.session() as s:
        rows = s.connection().exec_driver_sql(
            "SELECT sc.item_id, sc.value, sc.error FROM score sc "
            "JOIN metric_run r ON r.id = sc.run_id WHERE r.metric = ? ORDER BY sc.run_id",
            (metric,),
        )
        return {item_id: (value, error) for item_id, value, error in rows}


def test_through_the_scoring_job_from_stored_scores(new_study) -> None:
    from sacrebleu.metrics import BLEU

    ids = add_items(
        new_study,
        [
            (STORM, SPLIT, (), "split"),
            (STORM, STORM, (), "copy"),
            ("A source nobody annotated.", "An output.", (), "x"),
        ],
    )
    with new_study.session() as s:
        import_ucca(s, [DATA / "storm.xml"])
    summaries = score_study(ScoreRequest(new_study.path, SPECS), JobContext())
    assert [s.status for s in summaries] == ["done"] * 4

    bleu = BLEU(effective_order=True)
    samsa_hand = {ids[0]: 100 * 3 / 9 * 2.75, ids[1]: 100 * 3 / 9}  # test_samsa_metric's values
    bleu_hand = {
        ids[0]: bleu.sentence_score(SPLIT, [STORM]).score,
        ids[1]: 100.0,
    }
    am, gm = _stored(new_study, "bleu_samsa_am"), _stored(new_study, "bleu_samsa_gm")
    for i in ids[:2]:
        assert am[i][0] == pytest.approx((bleu_hand[i] + samsa_hand[i]) / 2, abs=1e-6)
        assert gm[i][0] == pytest.approx(math.sqrt(bleu_hand[i] * samsa_hand[i]), abs=1e-6)
    assert am[ids[1]][0] == pytest.approx(200 / 3)
    value, error = am[ids[2]]
    assert value is None and "no stored SAMSA score" in error and "run samsa" in error

    # The means were filed against the values found before BLEU and SAMSA ran: the next
    # job computes them once more, from the same stored scores, and the one after finds
    # them current.
    again = {s.metric: s for s in score_study(ScoreRequest(new_study.path, SPECS), JobContext())}
    assert again["bleu"].status == "cached"
    assert (again["bleu_samsa_am"].scored, again["bleu_samsa_am"].failed) == (2, 1)
    assert _stored(new_study, "bleu_samsa_am")[ids[0]][0] == pytest.approx(am[ids[0]][0])
    third = {s.metric: s for s in score_study(ScoreRequest(new_study.path, SPECS), JobContext())}
    # only the item without scenes (an error, never cached) is tried again
    summary = third["bleu_samsa_am"]
    assert (summary.cached, summary.scored, summary.failed) == (2, 0, 1)
