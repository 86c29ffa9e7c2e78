"""Pre-filled error spans (ESA^AI): a stored judge run's spans proposed on unrated items, and
each proposal's fate (kept, edited, deleted) stored with the rating through submit, resume,
revision and undo; rater-added spans carry no proposal."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from meaningbench.annotation.proposals import ProposalFate, locate, prefill_candidates
from meaningbench.annotation.protocols import set_protocol, study_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.spans import make_span
from meaningbench.cli import main
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from tests.annotation.judge_spans import store_judge_answers
from tests.annotation.test_spans import PAIRS, _study

# What the judge answered per item (in PAIRS order): JSON spans then a score, as the ESA
# template asks. The third names words that are not in the output: left out.
ANSWERS = [
    '[{"text": "fermait", "severity": "minor"}, {"text": "le lundi", "severity": "Major"}]\n'
    "Score: 40",
    '[{"text": "a village", "severity": "critical"}]\nScore: 70',
    '[{"text": "the engine", "severity": "major"}]\nScore: 20',
]


@pytest.fixture
def study(tmp_path: Path):
    st = _study(tmp_path / "esa.mbstudy")
    label = store_judge_answers(st, {i + 1: a for i, a in enumerate(ANSWERS)})
    set_protocol(st, prefill=label)
    yield st
    st.close()


def _rows(study: Study, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(study.path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_locate_finds_the_judges_words_widened_to_whole_words_without_overlap() -> None:
    out = "The river crossed a village, the river ran."
    spans = locate(
        [
            {"text": "river", "severity": "major"},
            {"text": "River", "severity": "odd"},  # the second occurrence: the first is taken
            {"text": "villag", "severity": "minor"},  # widened to the whole word
            {"text": "a bridge", "severity": "minor"},  # not in the output
            "not an object",
        ],
        out,
    )
    assert [(s.text, s.severity) for s in spans] == [
        ("river", "major"),
        ("river", "minor"),
        ("village,", "minor"),
    ]


def test_locate_keeps_the_offsets_of_a_text_that_lower_casing_lengthens() -> None:
    out = "İİİİ sail on the Bosphorus."  # lower-cased, each İ is two code points
    (span,) = locate([{"text": "sail", "severity": "minor"}], out)
    assert out[span.start : span.end] == span.text == "sail"


def test_the_setting_names_a_stored_judge_run_and_shows_its_proposals(study) -> None:
    (source,) = prefill_candidates_of(study)
    choice = study_protocol(study)
    assert choice.prefill == source and source.label == "llm_judge[template=esa]"
    assert source.model == "smollm2" and source.template == "esa"
    assert "error spans pre-filled from llm_judge[template=esa]" in choice.line()
    sess = AnnotationSession(study, "alice")
    shown = {}
    item = sess.current()
    while item is not None:
        shown[item.output] = [(p.span.text, p.span.severity) for p in item.proposals]
        assert all(p.config_hash == source.config_hash for p in item.proposals)
        sess.skip(item.item_id)
        item = sess.current() if len(shown) < len(PAIRS) else None
    assert shown == {
        "Le café fermait le lundi.": [("fermait", "minor"), ("le lundi.", "major")],
        "The river crossed a village.": [("a village.", "major")],
        "Émile fixed the bridge.": [],
    }


def prefill_candidates_of(study: Study):
    with study.session() as s:
        return prefill_candidates(s)


def _first_item(sess: AnnotationSession):
    item = sess.current()
    while item is not None and item.output != PAIRS[0][1]:
        sess.skip(item.item_id)
        item = sess.current()
    assert item is not None and len(item.proposals) == 2
    return item


def _decide(item):
    """Keep `fermait`, edit `le lundi.` to minor over `lundi.`, add `Le café`."""
    fermait, lundi = item.proposals
    edited = make_span("output", item.output, item.output.index("lundi"), len(item.output), "minor")
    own = make_span("output", item.output, 0, 7, "major")
    spans = [own, fermait.span, edited]
    return spans, [ProposalFate(fermait, fermait.span), ProposalFate(lundi, edited)]


def test_submit_stores_each_proposals_fate_and_the_raters_own_spans(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = _first_item(sess)
    spans, fates = _decide(item)
    sub = sess.submit(item.item_id, {"meaning": 45.0}, spans=spans, proposals=fates)
    rid = sub.rating_ids[0]
    stored = _rows(
        study,
        "SELECT p.text, p.severity, p.fate, p.model, p.template, r.text, r.severity "
        "FROM span_proposal p LEFT JOIN rating_span r ON r.id = p.span_id "
        f"WHERE p.rating_id = {rid} ORDER BY p.start",
    )
    assert stored == [
        ("fermait", "minor", "kept", "smollm2", "esa", "fermait", "minor"),
        ("le lundi.", "major", "edited", "smollm2", "esa", "lundi.", "minor"),
    ]
    own = _rows(
        study,
        "SELECT text FROM rating_span WHERE rating_id = "
        f"{rid} AND id NOT IN (SELECT span_id FROM span_proposal WHERE span_id IS NOT NULL)",
    )
    assert own == [("Le café",)]


def test_a_deleted_proposal_stays_a_record_and_comes_back_on_resume_and_revision(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = _first_item(sess)
    fermait, lundi = item.proposals
    fates = [ProposalFate(fermait, None), ProposalFate(lundi, lundi.span)]
    sess.submit(item.item_id, {"meaning": 60.0}, spans=[lundi.span], proposals=fates)
    assert _rows(study, "SELECT fate, span_id IS NULL FROM span_proposal ORDER BY start") == [
        ("deleted", 1),
        ("kept", 0),
    ]
    # A new session (a restart) on the rated item: the spans and their fates, no new proposals.
    again = AnnotationSession(study, "alice")
    back = again.previous()
    assert back is not None and back.item_id == item.item_id
    assert back.proposals == () and back.spans == (lundi.span,)
    assert set(back.fates) == set(fates)
    # A revision keeps the record of every proposal with the new rating.
    again.submit(back.item_id, {"meaning": 55.0}, spans=back.spans, proposals=back.fates)
    rows = _rows(
        study,
        "SELECT r.state, p.fate FROM span_proposal p JOIN rating r ON r.id = p.rating_id "
        "ORDER BY r.id, p.start",
    )
    assert rows == [
        ("superseded", "deleted"),
        ("superseded", "kept"),
        ("current", "deleted"),
        ("current", "kept"),
    ]


def test_undo_reopens_the_item_with_the_judges_proposals_again(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = _first_item(sess)
    spans, fates = _decide(item)
    sess.submit(item.item_id, {"meaning": 45.0}, spans=spans, proposals=fates)
    back = sess.undo_last()
    assert back is not None and back.item_id == item.item_id and not back.reviewing
    assert back.proposals == item.proposals and back.spans == () and back.fates == ()


def test_a_fate_whose_span_is_missing_is_refused_and_nothing_is_stored(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = _first_item(sess)
    fermait, _lundi = item.proposals
    with pytest.raises(UserError, match="not among the spans"):
        sess.submit(
            item.item_id,
            {"meaning": 45.0},
            spans=[],
            proposals=[ProposalFate(fermait, fermait.span)],
        )
    assert _rows(study, "SELECT COUNT(*) FROM rating") == [(0,)]
    assert _rows(study, "SELECT COUNT(*) FROM span_proposal") == [(0,)]


def test_protocol_command_sets_and_clears_the_prefill(tmp_path: Path, capsys) -> None:
    st = _study(tmp_path / "cli.mbstudy")
    path = str(st.path)
    with pytest.raises(UserError, match="score the items first"):
        set_protocol(st, prefill="llm_judge[template=esa]")
    # A judge run without spans (the da template) is no source of spans, and is named so.
    store_judge_answers(st, {1: "Score: 50"}, template="da")
    with pytest.raises(UserError, match="'llm_judge' has no error spans to pre-fill from"):
        set_protocol(st, prefill="llm_judge")
    label = store_judge_answers(st, {1: ANSWERS[0]})
    st.close()
    # A run that exists but holds no span list is named as such, not "score the items first".
    da_run = "llm_judge"  # the da template, the default
    assert main(["protocol", path, "--prefill-spans", da_run]) == 2
    err = capsys.readouterr().err
    assert f"the stored llm_judge run '{da_run}' has no error spans to pre-fill from" in err
    assert "none of its answers holds a list of spans" in err and label in err
    assert "score the items first" not in err and len(err.strip().splitlines()) == 1
    assert main(["protocol", path, "--prefill-spans", "llm_judge[template=xyz]"]) == 2
    assert "no stored llm_judge run with error spans is named" in capsys.readouterr().err
    assert main(["protocol", path, "--prefill-spans", label]) == 0
    said = capsys.readouterr().out
    assert "error spans pre-filled from llm_judge[template=esa] (model smollm2" in said
    assert main(["protocol", path, "--set", "da"]) == 2
    assert "Pre-filled error spans belong to the esa protocol" in capsys.readouterr().err
    assert main(["protocol", path, "--no-prefill-spans"]) == 0
    assert "pre-filled" not in capsys.readouterr().out
