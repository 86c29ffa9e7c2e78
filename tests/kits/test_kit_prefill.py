"""A rater kit of a study that pre-fills judge spans: the kit keeps the judge's scores of its
own items (and no other score), its screen proposes the spans, and the fates come back with
the ratings when the kit is collected."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from meaningbench.annotation.proposals import ProposalFate
from meaningbench.annotation.session import AnnotationSession
from meaningbench.db.study import open_study
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.making import make_kits
from tests.annotation.judge_spans import store_judge_answers
from tests.annotation.test_span_proposals import PAIRS, study  # noqa: F401


def _count(path: Path, sql: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_a_kit_proposes_the_judges_spans_and_brings_their_fates_back(study, tmp_path) -> None:  # noqa: F811
    store_judge_answers(study, {1: "Score: 50"}, template="da")  # a score the kit leaves out
    [kit] = make_kits(study, ["bo"], tmp_path / "kits")
    assert _count(kit.path, "SELECT COUNT(*) FROM metric_run") == 1
    assert _count(kit.path, "SELECT COUNT(*) FROM score") == len(PAIRS)
    rated = open_study(kit.path)
    try:
        sess = AnnotationSession(rated, "bo")
        item = sess.current()
        while item is not None and not item.proposals:
            sess.skip(item.item_id)
            item = sess.current()
        assert item is not None
        first = item.proposals[0]
        rest = [ProposalFate(p, None) for p in item.proposals[1:]]
        sess.submit(
            item.item_id,
            {"meaning": 50.0},
            spans=[first.span],
            proposals=[ProposalFate(first, first.span), *rest],
        )
    finally:
        rated.close()
    report = collect_kits(study, tmp_path / "kits")
    assert not report.refused and len(report.collected) == 1
    fates = _count(
        study.path,
        "SELECT COUNT(*) FROM span_proposal p JOIN rating r ON r.id = p.rating_id "
        "JOIN annotator a ON a.id = r.annotator_id WHERE a.name = 'bo'",
    )
    assert fates == len(item.proposals)
