"""The ESA screen pre-filled with a stored judge run's error spans: the proposals show as
undecided marks, and the keys keep (A), edit (1 / 2), delete (Del) and skip between (N)
them; the rater adds a span of their own and scores. The file records each fate."""

from __future__ import annotations

import json
import sqlite3

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.spans import words
from meaningbench.cli import main
from meaningbench.db.models import Item
from meaningbench.ui.annotation.span_editor import SpanEditor
from tests.annotation.judge_spans import store_judge_answers
from tests.annotation.test_spans import _study
from tests.ui.annotation.conftest import press, type_text

K = Qt.Key


def _answer(output: str) -> str:
    """Three errors named by their words: the first word (minor), words 3–4 (major) and
    the last word (minor), then a score, as the ESA template asks."""
    w = words(output)
    parts = [
        (output[w[0][0] : w[0][1]], "minor"),
        (output[w[2][0] : w[3][1]], "major"),
        (output[w[-1][0] : w[-1][1]], "minor"),
    ]
    spans = ", ".join(f'{{"text": "{t}", "severity": "{sev}"}}' for t, sev in parts)
    return f"[{spans}]\nScore: 55"


def _prefill(study) -> None:
    with study.session() as s:
        outputs = {i.id: i.output for i in s.query(Item)}
    label = store_judge_answers(study, {i: _answer(o) for i, o in outputs.items()})
    set_protocol(study, "esa", prefill=label)


def _stored(study, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(study.path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_proposals_are_kept_edited_deleted_by_keys_then_scored(qtbot, make_screen, study) -> None:
    _prefill(study)
    screen = make_screen()
    item = screen.current_item()
    editor = QApplication.focusWidget()
    assert isinstance(editor, SpanEditor)
    marks = editor.marks()
    assert len(marks) == 3 and all(m.pending for m in marks) == (editor.pending() == 3)
    assert [m.span for m in marks] == [p.span for p in item.proposals]
    assert "3 proposed spans to decide" in screen.hint.text()
    legend = screen.findChild(type(screen.hint), "prefillLegend")
    assert "Pre-marked by smollm2 (esa)" in legend.text() and legend.isVisible()
    first, second, third = item.proposals
    # The cursor starts on the first proposal: A keeps it and goes on to the next.
    assert editor.selection() == (first.span.start, words(item.output)[0][1])
    press(qtbot, screen, K.Key_A)
    assert editor.pending() == 2 and not editor.marks()[0].pending
    assert editor.selection()[0] == second.span.start
    # The other severity over the second: an edit of its severity; its two words stay.
    press(qtbot, screen, K.Key_1 if second.span.severity == "major" else K.Key_2)
    assert (second.span.start, second.span.end) in [(s.start, s.end) for s in editor.spans()]
    press(qtbot, screen, K.Key_N)  # on to the third: deleted
    assert editor.selection()[0] == third.span.start
    press(qtbot, screen, K.Key_Delete)
    assert editor.pending() == 0 and len(editor.spans()) == 2
    # A span of the rater's own, on a word no proposal touched.
    taken = [(m.span.start, m.span.end) for m in editor.marks()]
    free = next(
        k for k, (a, b) in enumerate(words(item.output)) if all(b <= s or a >= e for s, e in taken)
    )
    press(qtbot, screen, K.Key_Home)
    for _ in range(free):
        press(qtbot, screen, K.Key_Right)
    press(qtbot, screen, K.Key_2)
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "6")
    press(qtbot, screen, K.Key_Return)
    assert screen.current_item().item_id != item.item_id
    fates = _stored(
        study,
        'SELECT p.start, p.fate, p.model, p.template, s.start, s."end", s.severity '
        "FROM span_proposal p LEFT JOIN rating_span s ON s.id = p.span_id ORDER BY p.start",
    )
    w = words(item.output)
    edited_to = "minor" if second.span.severity == "major" else "major"
    assert fates == [
        (first.span.start, "kept", "smollm2", "esa", first.span.start, first.span.end, "minor"),
        (second.span.start, "edited", "smollm2", "esa", second.span.start, second.span.end,
         edited_to),
        (third.span.start, "deleted", "smollm2", "esa", None, None, None),
    ]  # fmt: skip
    own = _stored(
        study,
        "SELECT start, severity FROM rating_span WHERE id NOT IN "
        "(SELECT span_id FROM span_proposal WHERE span_id IS NOT NULL)",
    )
    assert own == [(w[free][0], "major")]
    assert _stored(study, "SELECT value FROM rating WHERE state = 'current'") == [(60.0,)]


def test_a_revision_shows_the_decided_spans_and_keeps_the_record(qtbot, make_screen, study) -> None:
    _prefill(study)
    screen = make_screen()
    item = screen.current_item()
    press(qtbot, screen, K.Key_Delete)  # the first proposal deleted, the others left: kept
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "7")
    press(qtbot, screen, K.Key_Return)
    press(qtbot, screen, K.Key_Left, Qt.KeyboardModifier.AltModifier)
    back = screen.current_item()
    assert back.item_id == item.item_id and back.reviewing and back.proposals == ()
    editor = screen.span_editors[0]
    assert editor.pending() == 0
    assert [m.proposal for m in editor.marks()] == list(item.proposals[1:])
    assert sorted(f.fate for f in back.fates) == ["deleted", "kept", "kept"]
    # Enter without a change writes nothing; a new score revises with the same record.
    press(qtbot, screen, K.Key_Tab)
    type_text(qtbot, screen, "3")
    press(qtbot, screen, K.Key_Return)
    rows = _stored(
        study,
        "SELECT r.state, p.fate FROM span_proposal p JOIN rating r ON r.id = p.rating_id "
        "ORDER BY r.id, p.start",
    )
    assert [f for state, f in rows if state == "current"] == ["deleted", "kept", "kept"]
    assert [f for state, f in rows if state == "superseded"] == ["deleted", "kept", "kept"]


def test_the_pre_marked_legend_shows_only_on_items_with_proposals(
    qtbot, make_screen, study
) -> None:
    """The judge found errors in half the outputs: "Pre-marked by …" shows on those alone,
    and not on a revised rating (whose proposals are decided)."""
    with study.session() as s:
        outputs = {i.id: i.output for i in s.query(Item)}
    answers = {i: _answer(o) if i % 2 else "[]\nScore: 90" for i, o in outputs.items()}
    set_protocol(study, "esa", prefill=store_judge_answers(study, answers))
    screen = make_screen()
    legend = screen.findChild(type(screen.hint), "prefillLegend")
    seen = []
    while (item := screen.current_item()) is not None:
        assert legend.isVisible() == bool(item.proposals), item.item_id
        seen.append(bool(item.proposals))
        press(qtbot, screen, K.Key_Tab)
        type_text(qtbot, screen, "5")
        press(qtbot, screen, K.Key_Return)
    assert seen.count(True) == seen.count(False) == len(outputs) // 2
    press(qtbot, screen, K.Key_Left, Qt.KeyboardModifier.AltModifier)
    while not (item := screen.current_item()).fates:
        press(qtbot, screen, K.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert item.reviewing and item.proposals == () and not legend.isVisible()


def test_the_settings_offer_the_stored_judge_runs_with_spans(qtbot, study) -> None:
    from meaningbench.annotation.protocols import study_protocol
    from meaningbench.ui.annotation.settings_widget import AnnotationSettingsWidget

    with study.session() as s:
        first = s.query(Item).first()
        assert first is not None
        item_id, output = first.id, first.output
    label = store_judge_answers(study, {item_id: _answer(output)})
    store_judge_answers(study, {item_id: "Score: 40"}, template="da")  # no spans: not offered
    widget = AnnotationSettingsWidget(study)
    qtbot.addWidget(widget)
    choices = [widget.prefill.itemText(i) for i in range(widget.prefill.count())]
    assert len(choices) == 2 and choices[0].startswith("none")
    assert choices[1].startswith(f"{label} (model smollm2, template esa")
    widget.prefill.setCurrentIndex(1)
    assert not widget.apply(), "the da protocol takes no pre-filled spans"
    assert "belong to the esa protocol" in widget.error.text()
    widget.protocol.setCurrentIndex(widget.protocol.findData("esa"))
    assert widget.apply()
    stored = study_protocol(study).prefill
    assert stored is not None and stored.label == label
    again = AnnotationSettingsWidget(study)
    qtbot.addWidget(again)
    assert again.prefill.currentIndex() == 1


MUSHROOMS = (
    "Mycologists are scientists who study fungi such as mushrooms.",
    "Mycology is read by other people who study mushrooms.",
)


def test_1_on_a_proposal_reached_with_n_changes_its_severity_and_keeps_its_words(
    qtbot, make_screen, tmp_path
) -> None:
    """N onto a major proposal, then 1: the whole proposal turns minor (fate `edited`, its
    words unchanged), and `spans export` records that; Shift+→ then 2 gives a new extent."""
    study = _study(tmp_path / "mushrooms.mbstudy", pairs=[(*MUSHROOMS, "sys-a")])
    try:
        label = store_judge_answers(
            study,
            {1: '[{"text": "Mycology", "severity": "minor"}, '
                '{"text": "other people who study mushrooms.", "severity": "major"}]\nScore: 30'},
        )  # fmt: skip
        set_protocol(study, prefill=label)
        screen = make_screen(target=study)
        editor = screen.span_editors[0]
        first, whole = screen.current_item().proposals
        assert whole.span.text == "other people who study mushrooms." and editor.pending() == 2
        press(qtbot, screen, K.Key_N)
        assert editor.selection()[0] == whole.span.start
        press(qtbot, screen, K.Key_1)
        assert [(m.span.text, m.span.severity, m.pending) for m in editor.marks()] == [
            ("Mycology", "minor", True),
            ("other people who study mushrooms.", "minor", False),
        ]
        # A selection stretched with Shift is a new extent: the first proposal, widened.
        press(qtbot, screen, K.Key_Home)
        press(qtbot, screen, K.Key_Right, Qt.KeyboardModifier.ShiftModifier)
        press(qtbot, screen, K.Key_2)
        assert [(m.span.text, m.span.severity) for m in editor.marks()] == [
            ("Mycology is", "major"),
            ("other people who study mushrooms.", "minor"),
        ]
        press(qtbot, screen, K.Key_Tab)
        type_text(qtbot, screen, "4")
        press(qtbot, screen, K.Key_Return)
        out = tmp_path / "spans.jsonl"
        assert main(["spans", "export", str(study.path), str(out)]) == 0
    finally:
        study.close()
    (line,) = [json.loads(text) for text in out.read_text("utf-8").splitlines()]
    assert [(s["text"], s["severity"], s["origin"]) for s in line["spans"]] == [
        ("Mycology is", "major", "edited"),
        ("other people who study mushrooms.", "minor", "edited"),
    ]
    assert [(p["text"], p["severity"], p["fate"]) for p in line["proposals"]] == [
        ("Mycology", "minor", "edited"),
        ("other people who study mushrooms.", "major", "edited"),
    ]
