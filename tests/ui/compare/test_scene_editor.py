"""The scene editor: clicking words builds scenes that are stored in the study."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from meaningbench.core.keys import source_group_key
from meaningbench.jobs.scene_store import load_scenes, replace_scenes
from meaningbench.metrics.structural.scenes import Participant, SceneSpec
from meaningbench.metrics.structural.tokens import words
from meaningbench.runtime.changes import StudyChanges
from meaningbench.ui.compare.scene_editor import SceneEditor
from meaningbench.ui.workers import JobRunner
from tests.ui.compare.studies import STORM

SOURCE = "The cat sat on the mat and the dog barked."
UCCA_DATA = Path(__file__).parents[2] / "metrics" / "structural" / "data"


def _editor(qtbot, study, source: str = SOURCE, runner: JobRunner | None = None) -> SceneEditor:
    editor = SceneEditor(study, runner=runner)
    qtbot.addWidget(editor)
    editor.resize(700, 500)
    editor.show()
    editor.set_source(source_group_key(source), source)
    return editor


def _click(qtbot, editor: SceneEditor, word: str, nth: int = 0) -> None:
    chips = [c for c in editor.chips if c.text() == word]
    qtbot.mouseClick(chips[nth], Qt.MouseButton.LeftButton)


def _mode(qtbot, editor: SceneEditor, mode: str) -> None:
    from PySide6.QtWidgets import QRadioButton

    button = editor.findChild(QRadioButton, f"mode_{mode}")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert editor.mode == mode


def test_clicks_build_two_scenes_that_are_saved_as_manual(qtbot, new_study) -> None:
    runner = JobRunner()
    told: list[StudyChanges] = []
    runner.study_changed.connect(told.append)
    editor = _editor(qtbot, new_study, runner=runner)
    tokens = words(SOURCE)
    assert [c.text() for c in editor.chips] == tokens

    qtbot.mouseClick(editor.add_scene_button, Qt.MouseButton.LeftButton)
    _click(qtbot, editor, "sat")
    qtbot.mouseClick(editor.add_part_button, Qt.MouseButton.LeftButton)
    _click(qtbot, editor, "The")
    _mode(qtbot, editor, "centre")
    _click(qtbot, editor, "cat")
    qtbot.mouseClick(editor.add_part_button, Qt.MouseButton.LeftButton)  # words mode again
    _click(qtbot, editor, "on")
    _click(qtbot, editor, "the")
    _mode(qtbot, editor, "centre")
    _click(qtbot, editor, "mat")
    assert editor.chips[tokens.index("sat")].role == "main"
    assert editor.chips[tokens.index("mat")].role == "centre"

    qtbot.mouseClick(editor.add_scene_button, Qt.MouseButton.LeftButton)
    _click(qtbot, editor, "barked")
    qtbot.mouseClick(editor.add_part_button, Qt.MouseButton.LeftButton)
    _click(qtbot, editor, "the", 1)
    _click(qtbot, editor, "dog")
    assert editor.dirty

    with qtbot.waitSignal(editor.scenes_saved, timeout=2000) as saved:
        qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    assert saved.args == [source_group_key(SOURCE)]
    assert not editor.dirty
    # The save is one write through the runner, told once: this source's scenes changed.
    assert told == [StudyChanges.of(scenes=[source_group_key(SOURCE)])]

    with new_study.session() as s:
        stored = load_scenes(s)[source_group_key(SOURCE)]
    t = tuple(tokens)
    assert stored == [
        SceneSpec(t, (2,), (Participant((0, 1), (1,)), Participant((3, 4, 5), (5,))), "manual", 0),
        SceneSpec(t, (9,), (Participant((7, 8), ()),), "manual", 1),
    ]


def test_clicking_again_removes_and_a_scene_needs_a_main_relation(qtbot, new_study) -> None:
    editor = _editor(qtbot, new_study)
    qtbot.mouseClick(editor.add_scene_button, Qt.MouseButton.LeftButton)
    _click(qtbot, editor, "sat")
    _click(qtbot, editor, "sat")  # toggled off
    assert editor.scenes[0].main == set()
    assert not editor.save()
    assert "main relation" in editor.status.text()
    with new_study.session() as s:
        assert load_scenes(s) == {}


def test_imported_scenes_load_as_a_starting_point_and_revert_discards_edits(
    qtbot, new_study
) -> None:
    group = source_group_key(SOURCE)
    t = tuple(words(SOURCE))
    parser = [SceneSpec(t, (2,), (Participant((0, 1), (1,)),), "parser")]
    with new_study.session() as s:
        replace_scenes(s, group, parser, origin="parser")
    editor = _editor(qtbot, new_study)
    assert editor.loaded_origin == "parser"
    assert [c.role for c in editor.chips[:3]] == ["participant", "centre", "main"]
    qtbot.mouseClick(editor.remove_scene_button, Qt.MouseButton.LeftButton)
    assert editor.scenes == [] and editor.dirty
    qtbot.mouseClick(editor.revert_button, Qt.MouseButton.LeftButton)
    assert len(editor.scenes) == 1 and not editor.dirty
    # saving keeps the parser's proposal and adds the annotator's own version beside it
    assert editor.save()
    with new_study.session() as s:
        assert load_scenes(s, origin="parser")[group][0].origin == "parser"
        assert load_scenes(s)[group][0].origin == "manual"


def test_ucca_import_from_the_editor(qtbot, new_study) -> None:
    from tests.metrics.structural.helpers import add_items

    add_items(new_study, [(STORM, "The storm passed.", "A")])
    runner = JobRunner()
    told: list[StudyChanges] = []
    runner.study_changed.connect(told.append)
    editor = _editor(qtbot, new_study, STORM, runner=runner)
    assert editor.scenes == []
    summary = editor.import_ucca([UCCA_DATA / "storm.xml"])
    assert "3 scene(s) stored" in summary
    # One write through the runner, told once: the matched source's scenes changed.
    assert told == [StudyChanges.of(scenes=[source_group_key(STORM)])]
    assert editor.loaded_origin == "ucca" and len(editor.scenes) == 3
    # the remote participant of "sailed" survives an edit and a save
    assert editor.save()
    with new_study.session() as s:
        sailed = load_scenes(s)[source_group_key(STORM)][2]
    assert sailed.participants[0].remote
