"""Pre-filled spans' provenance in the files: `spans export` (and back through import, byte
for byte), `dataset`'s Parquet and its card with the share of model spans kept and the
rater-added spans per item."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from meaningbench.annotation.proposals import ProposalFate
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.span_io import export_spans, import_spans
from meaningbench.annotation.spans import make_span
from meaningbench.cli import main
from meaningbench.errors import UserError
from tests.annotation.test_span_proposals import PAIRS, _decide, _first_item, study  # noqa: F401
from tests.annotation.test_spans import _study


def _rate(study) -> None:  # noqa: F811
    """alice: item 1 (keep, edit, add own); item 2 (delete its proposal); item 3 (one own)."""
    sess = AnnotationSession(study, "alice")
    item = _first_item(sess)
    spans, fates = _decide(item)
    sess.submit(item.item_id, {"meaning": 45.0}, spans=spans, proposals=fates)
    for _ in range(2):
        item = sess.next_item()
        assert item is not None
        if item.proposals:
            (p,) = item.proposals
            sess.submit(item.item_id, {"meaning": 80.0}, proposals=[ProposalFate(p, None)])
        else:
            own = make_span("output", item.output, 0, 5, "minor")
            sess.submit(item.item_id, {"meaning": 30.0}, spans=[own])


def test_spans_export_says_where_each_span_came_from_and_imports_back(study, tmp_path) -> None:  # noqa: F811
    _rate(study)
    out = tmp_path / "spans.jsonl"
    assert export_spans(study, out) == 3
    lines = {
        json.loads(line)["output"]: json.loads(line) for line in out.read_text("utf-8").splitlines()
    }
    first = lines[PAIRS[0][1]]
    assert [(s["text"], s["origin"], s.get("proposal")) for s in first["spans"]] == [
        ("Le café", "rater", None),
        ("fermait", "kept", 0),
        ("lundi.", "edited", 1),
    ]
    assert [
        (p["text"], p["severity"], p["fate"], p["model"], p["template"]) for p in first["proposals"]
    ] == [
        ("fermait", "minor", "kept", "smollm2", "esa"),
        ("le lundi.", "major", "edited", "smollm2", "esa"),
    ]
    assert first["proposals"][0]["config_hash"] and list(first)[-1] == "proposals"
    second = lines[PAIRS[1][1]]
    assert second["spans"] == [] and [p["fate"] for p in second["proposals"]] == ["deleted"]
    assert "proposals" not in lines[PAIRS[2][1]], "a rating without proposals keeps the old shape"
    # Into a fresh copy of the items and out again: the same bytes.
    other = _study(tmp_path / "other.mbstudy")
    try:
        assert import_spans(other, out).ratings == 3
        again = tmp_path / "again.jsonl"
        export_spans(other, again)
    finally:
        other.close()
    assert again.read_bytes() == out.read_bytes()


def test_a_file_whose_fate_disagrees_with_its_spans_is_refused(tmp_path: Path) -> None:
    src, output, system = PAIRS[0]
    line = {
        "dataset": "wiki", "system": system, "source": src, "output": output,
        "rater": "bo", "dimension": "meaning", "score": 50.0,
        "spans": [{"side": "output", "start": 8, "end": 15, "severity": "minor",
                   "text": "fermait", "origin": "kept", "proposal": 0}],
        "proposals": [{"side": "output", "start": 8, "end": 15, "severity": "major",
                       "text": "fermait", "model": "m", "config_hash": "h", "template": "esa",
                       "fate": "kept"}],
    }  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    st = _study(tmp_path / "s.mbstudy")
    try:
        with pytest.raises(UserError, match=r"bad.jsonl, line 1, field 'proposals\[0\]': fate "):
            import_spans(st, path)
        with st.session() as s:
            assert s.connection().exec_driver_sql("SELECT COUNT(*) FROM rating").scalar() == 0
    finally:
        st.close()


def test_dataset_parquet_and_card_give_the_provenance(study, tmp_path, capsys) -> None:  # noqa: F811
    _rate(study)
    path = str(study.path)
    study.close()
    out = tmp_path / "ds"
    assert main(["dataset", path, str(out), "--boot", "50"]) == 0
    rows = {r["output"]: r for r in pq.read_table(out / "ratings.parquet").to_pylist()}
    first = rows[PAIRS[0][1]]
    assert [(s["text"], s["origin"], s["proposal"]) for s in first["spans"]] == [
        ("Le café", "rater", None),
        ("fermait", "kept", 0),
        ("lundi.", "edited", 1),
    ]
    assert [p["fate"] for p in first["proposals"]] == ["kept", "edited"]
    assert rows[PAIRS[2][1]]["proposals"] == []
    card = (out / "README.md").read_text(encoding="utf-8")
    section = card.split("## Pre-filled error spans", 1)[1].split("\n## ", 1)[0]
    # 3 proposals: 1 kept, 1 edited, 1 deleted; own spans: 1 (item 1) + 1 (item 3) over 3.
    assert "- proposed by: smollm2 with template esa (config " in section
    assert (
        "- 3 spans proposed on 2 of 3 ratings: kept unchanged 1 (33%), edited 1 (33%), deleted 1 (33%)"
        in section
    )
    assert (
        "share of model spans kept (unchanged or edited): 66.7%; kept unchanged: 33.3%" in section
    )
    assert "- rater-added spans per item: 0.67 (2 spans over 3 ratings)" in section
    assert "proposals (error spans a judge pre-filled" in card
