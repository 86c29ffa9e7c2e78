"""The embedded judge's own error spans (SmolLM2-135M, `esa` template) on real CSMD dev
pairs (the copy in tests/fixtures/datasets), pre-filled on the ESA screen's engine: each
proposal is the judge's stored span found in the output, nothing else. The tiny model often
answers without a span list (it did on both pairs on this machine): then the setting is
refused with the fix, and nothing is pre-filled. About five minutes on a busy CPU, hence
`slow`."""

from __future__ import annotations

import json
import sqlite3

import pytest

from meaningbench.annotation.proposals import locate
from meaningbench.annotation.session import AnnotationSession
from meaningbench.cli import main
from meaningbench.db.study import open_study
from meaningbench.metrics.neural.judge import LlmJudgeMetric
from tests.conftest import FIXTURE_DATASETS
from tests.jobs.studydata import add_items, csmd_rows

CSMD_DEV = FIXTURE_DATASETS / "csmd" / "dev.tsv"
ITEMS = 2
SPEC = "llm_judge[template=esa]"


@pytest.mark.slow
def test_the_embedded_judges_spans_are_proposed_where_its_words_stand(
    new_study, monkeypatch, capsys
) -> None:
    found = LlmJudgeMetric().availability()
    if not found.ok:
        pytest.skip(f"the embedded judge is not installed: {found.reason}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    pairs = csmd_rows(FIXTURE_DATASETS, "dev")[:ITEMS]
    add_items(new_study, [(src, out, (), None) for src, out in pairs])
    path = str(new_study.path)
    new_study.close()
    assert main(["score", path, "--metrics", SPEC, "--device", "cpu"]) == 0
    conn = sqlite3.connect(path)
    try:
        stored = dict(
            conn.execute(
                "SELECT i.output, s.details FROM score s JOIN item i ON i.id = s.item_id"
            ).fetchall()
        )
    finally:
        conn.close()
    assert len(stored) == ITEMS
    capsys.readouterr()
    rc = main(["protocol", path, "--set", "esa", "--prefill-spans", SPEC])
    said = capsys.readouterr()
    if not any(isinstance(json.loads(d).get("spans"), list) for d in stored.values()):
        # No answer held a span list: nothing to pre-fill, and the message says so.
        assert rc == 2 and "none of its answers holds a list of spans" in said.err
        return
    assert rc == 0 and f"error spans pre-filled from {SPEC}" in said.out
    study = open_study(path)
    try:
        sess = AnnotationSession(study, "alice")
        for _ in range(ITEMS):
            item = sess.current()
            assert item is not None
            raw = json.loads(stored[item.output]).get("spans") or []
            assert [p.span for p in item.proposals] == locate(raw, item.output)
            for p in item.proposals:
                assert item.output[p.span.start : p.span.end] == p.span.text
                assert (p.model, p.template) == ("smollm2", "esa")
            sess.skip(item.item_id)
    finally:
        study.close()
