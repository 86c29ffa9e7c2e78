"""Error spans: stored with the rating, shown again on revision, undone with it, and
through JSON Lines import and export byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.annotation.span_io import export_spans, import_spans
from meaningbench.annotation.spans import Span, make_span, words
from meaningbench.db.models import Dataset, Rating, RatingSpan
from meaningbench.db.study import Study, create_study
from meaningbench.errors import UserError
from tests.annotation.factories import regular_item

PAIRS = [
    ("Le café était fermé le dimanche.", "Le café fermait le lundi.", "sys-a"),
    ("The old river crossed the quiet village.", "The river crossed a village.", "sys-b"),
    ("Émile repaired the engine near the bridge.", "Émile fixed the bridge.", None),
]


def _study(
    path: Path, protocol: str = "esa", pairs: list[tuple[str, str, str | None]] = PAIRS
) -> Study:
    st = create_study(path)
    with st.session() as s:
        ds = Dataset(name="wiki")
        s.add(ds)
        s.flush()
        for src, out, system in pairs:
            s.add(regular_item(ds.id, src, out, system))
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 3, False
        save_settings(s, cfg)
    set_protocol(st, protocol)
    return st


@pytest.fixture
def study(tmp_path: Path):
    st = _study(tmp_path / "esa.mbstudy")
    yield st
    st.close()


def test_words_give_the_offsets_a_span_editor_steps_over() -> None:
    text = "Le café  fermait."
    assert [text[a:b] for a, b in words(text)] == ["Le", "café", "fermait."]


def test_a_submission_keeps_its_spans_and_a_revision_shows_them(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.current()
    assert item is not None
    major = make_span("output", item.output, 0, 6, "major")
    minor = make_span("output", item.output, item.output.index(" ") + 1, len(item.output), "minor")
    sub = sess.submit(item.item_id, {"meaning": 35.0}, spans=[minor, major])
    with study.session() as s:
        rows = s.scalars(select(RatingSpan).order_by(RatingSpan.start)).all()
        assert [(r.rating_id, r.start, r.end, r.severity) for r in rows] == [
            (sub.rating_ids[0], 0, 6, "major"),
            (sub.rating_ids[0], minor.start, minor.end, "minor"),
        ]
        assert rows[0].text == item.output[0:6]
    sess.advance()
    back = sess.previous()
    assert back is not None and back.item_id == item.item_id
    assert back.spans == (major, minor)


def test_undo_withdraws_the_spans_with_the_rating(study) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.current()
    assert item is not None
    sess.submit(
        item.item_id, {"meaning": 80.0}, spans=[make_span("output", item.output, 0, 2, "minor")]
    )
    sess.advance()
    reopened = sess.undo_last()
    assert reopened is not None and reopened.item_id == item.item_id
    assert reopened.spans == ()


@pytest.mark.parametrize(
    ("span", "message"),
    [
        (Span("output", 0, 3, "minor", "xyz"), "not 'xyz'"),
        (Span("output", 5, 500, "minor", "x"), "do not fit the output"),
        (Span("output", 0, 2, "critical", "Le"), "severity must be one of minor, major"),
        (Span("margin", 0, 2, "minor", "Le"), "side must be one of output, source"),
    ],
)
def test_a_span_that_does_not_fit_its_item_is_refused(study, span, message) -> None:
    sess = AnnotationSession(study, "alice")
    item = sess.current()
    assert item is not None
    text = item.output
    if span.text == "Le":  # give the otherwise valid spans the item's own text
        span = Span(span.side, 0, 2, span.severity, text[0:2])
    with pytest.raises(UserError, match=message):
        sess.submit(item.item_id, {"meaning": 50.0}, spans=[span])
    with study.session() as s:
        assert s.scalars(select(Rating)).all() == []


def test_spans_outside_esa_are_refused(tmp_path: Path) -> None:
    st = _study(tmp_path / "da.mbstudy", "da")
    try:
        sess = AnnotationSession(st, "bob")
        item = sess.current()
        assert item is not None
        with pytest.raises(UserError, match="belong to the esa protocol"):
            sess.submit(
                item.item_id,
                {"meaning": 5.0},
                spans=[make_span("output", item.output, 0, 2, "minor")],
            )
    finally:
        st.close()


def _canonical_file(path: Path) -> bytes:
    """A spans file as a person (or another tool) would write it: by item, then rater."""
    src0, out0, _ = PAIRS[0]
    src2, out2, _ = PAIRS[2]
    lines = [
        '{"dataset": "wiki", "system": "sys-a", "source": "SRC0", "output": "OUT0", "rater": "ann", '
        '"dimension": "meaning", "score": 35.5, "spans": [{"side": "output", "start": 19, '
        '"end": 24, "severity": "major", "text": "lundi"}, {"side": "source", "start": 3, '
        '"end": 7, "severity": "minor", "text": "café"}]}',
        '{"dataset": "wiki", "system": "sys-a", "source": "SRC0", "output": "OUT0", "rater": "zoé", '
        '"dimension": "meaning", "score": 90.0, "spans": []}',
        '{"dataset": "wiki", "system": null, "source": "SRC2", "output": "OUT2", "rater": "ann", '
        '"dimension": "meaning", "score": 12.0, "spans": [{"side": "output", "start": 6, '
        '"end": 11, "severity": "major", "text": "fixed"}]}',
    ]
    text = "\n".join(lines) + "\n"
    for key, value in (("SRC0", src0), ("OUT0", out0), ("SRC2", src2), ("OUT2", out2)):
        text = text.replace(key, value)
    data = text.encode("utf-8")
    path.write_bytes(data)
    return data


def test_a_span_file_round_trips_import_then_export_byte_for_byte(study, tmp_path) -> None:
    original = _canonical_file(tmp_path / "in.jsonl")
    assert original.count("é".encode()) > 2  # non-ASCII text stays as it is, unescaped
    result = import_spans(study, tmp_path / "in.jsonl")
    assert (result.ratings, result.spans) == (3, 3)
    assert export_spans(study, tmp_path / "out.jsonl") == 3
    assert (tmp_path / "out.jsonl").read_bytes() == original
    # The offsets point at the words named: the text stored is the item's own.
    first = json.loads(original.decode().splitlines()[0])
    assert first["output"][19:24] == "lundi" and first["source"][3:7] == "café"


def test_a_bad_line_names_file_line_and_field_and_stores_nothing(study, tmp_path) -> None:
    good = _canonical_file(tmp_path / "in.jsonl").decode().splitlines()
    bad = good[2].replace('"text": "fixed"', '"text": "mended"')
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([good[0], good[1], bad]) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl, line 3, field 'spans\[0\]': .*not 'mended'"):
        import_spans(study, path)
    with study.session() as s:
        assert s.scalars(select(Rating)).all() == []
        assert s.scalars(select(RatingSpan)).all() == []


def test_an_import_never_overwrites_a_rating_already_there(study, tmp_path) -> None:
    _canonical_file(tmp_path / "in.jsonl")
    import_spans(study, tmp_path / "in.jsonl")
    with pytest.raises(UserError, match="line 1: 'ann' already rated this item"):
        import_spans(study, tmp_path / "in.jsonl")
    with study.session() as s:
        assert len(s.scalars(select(Rating)).all()) == 3


def test_spans_come_along_when_a_copy_is_merged(tmp_path: Path) -> None:
    from meaningbench.annotation.merge import merge_ratings
    from meaningbench.db.study import copy_study, open_study

    _study(tmp_path / "lead.mbstudy").close()
    copy_study(tmp_path / "lead.mbstudy", tmp_path / "copy.mbstudy")
    copy = open_study(tmp_path / "copy.mbstudy")
    try:
        sess = AnnotationSession(copy, "dana")
        item = sess.current()
        assert item is not None
        span = make_span("output", item.output, 0, 2, "major")
        sess.submit(item.item_id, {"meaning": 20.0}, spans=[span])
    finally:
        copy.close()
    lead = open_study(tmp_path / "lead.mbstudy")
    try:
        report = merge_ratings(lead, tmp_path / "copy.mbstudy")
        assert report.ratings_added == 1
        with lead.session() as s:
            [row] = s.scalars(select(RatingSpan)).all()
            rating = s.get(Rating, row.rating_id)
            assert rating is not None and rating.item_id == item.item_id
            assert (row.side, row.start, row.end, row.severity, row.text) == (
                "output",
                0,
                2,
                "major",
                item.output[:2],
            )
        merge_ratings(lead, tmp_path / "copy.mbstudy")  # a second merge adds nothing
        with lead.session() as s:
            assert len(s.scalars(select(RatingSpan)).all()) == 1
    finally:
        lead.close()
