"""The scene editor: draw a source's scenes by clicking its words.

Pick a scene (or add one), choose what a click marks — the main relation, the words of
the selected participant, or that participant's centre — and click words. Saved scenes are
the annotator's (origin `manual`) and take precedence over imported or proposed ones; those
load as a starting point when no manual scenes exist yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from meaningbench.ops.scenes import import_ucca_files, save_scenes
from meaningbench.queries import compare as compare_queries
from meaningbench.queries.scenes import Participant, SceneSpec, is_punct, source_words
from meaningbench.ui.compare.chips import FlowLayout, TokenChip
from meaningbench.ui.workers import JobRunner

MODES = ("main", "participant", "centre")
MAIN_FILL, MAIN_BORDER = "#ffd8a8", "#e8590c"
PARTICIPANT_COLOURS = (  # (light fill, strong fill / border)
    ("#d0e4ff", "#1c64d1"),
    ("#d3f5dc", "#1b7a35"),
    ("#ead7fb", "#7b2cbf"),
    ("#cdf3f0", "#0b7a73"),
    ("#f9d9e6", "#b5285f"),
)


@dataclass
class EditParticipant:
    words: set[int] = field(default_factory=set)
    centre: set[int] = field(default_factory=set)
    remote: bool = False  # kept from an import; the editor does not draw remote edges


@dataclass
class EditScene:
    main: set[int] = field(default_factory=set)
    participants: list[EditParticipant] = field(default_factory=list)

    @classmethod
    def from_spec(cls, spec: SceneSpec) -> EditScene:
        return cls(
            set(spec.main_relation),
            [EditParticipant(set(p.tokens), set(p.centre), p.remote) for p in spec.participants],
        )

    def to_spec(self, tokens: tuple[str, ...], position: int) -> SceneSpec:
        parts = tuple(
            Participant(tuple(sorted(p.words | p.centre)), tuple(sorted(p.centre)), p.remote)
            for p in self.participants
        )
        return SceneSpec(tokens, tuple(sorted(self.main)), parts, "manual", position)


class SceneEditor(QWidget):
    scenes_saved = Signal(str)  # source group
    scenes_edited = Signal()  # the scenes on screen changed (saved or not)

    def __init__(
        self, study: Any = None, parent: QWidget | None = None, *, runner: JobRunner | None = None
    ) -> None:
        super().__init__(parent)
        self.study = study
        # Saves run through the window's runner, which tells every screen once.
        self.runner = runner or JobRunner(self)
        self.group: str | None = None
        self.source = ""
        self.tokens: tuple[str, ...] = ()
        self.scenes: list[EditScene] = []
        self.loaded_origin = ""
        self.mode = "main"
        self.dirty = False
        self.chips: list[TokenChip] = []
        self._build()

    # -- layout -----------------------------------------------------------------------

    def _build(self) -> None:
        self.title = QLabel("<b>Scenes of this source</b>")
        self.origin_label = QLabel()
        self.origin_label.setWordWrap(True)
        self.origin_label.setObjectName("hint")
        self.chip_host = QWidget()
        self.chip_layout = FlowLayout(self.chip_host, spacing=5)
        light, strong = PARTICIPANT_COLOURS[0]
        self.legend = QLabel(
            f'<span style="background:{MAIN_FILL}; border:1px solid {MAIN_BORDER}">'
            f"&nbsp;main relation&nbsp;</span>&nbsp;&nbsp;"
            f'<span style="background:{light}">&nbsp;participant&nbsp;</span>&nbsp;&nbsp;'
            f'<span style="background:{strong}; color:white"><b>&nbsp;its centre&nbsp;</b></span>'
            "&nbsp;&nbsp;(each participant of the selected scene has its own colour)"
        )
        self.legend.setObjectName("hint")
        mode_row = self._build_modes()
        lists = self._build_lists()
        actions = self._build_actions()

        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.origin_label)
        layout.addWidget(self.chip_host)
        layout.addWidget(self.legend)
        layout.addLayout(mode_row)
        layout.addLayout(lists)
        layout.addLayout(actions)
        layout.addWidget(self.status)
        layout.addStretch(1)
        self._update_parser_button()
        self._update_buttons()

    def _build_modes(self) -> QHBoxLayout:
        """What a click on a word marks: the main relation, a participant, its centre."""
        self.mode_group = QButtonGroup(self)
        mode_row = QHBoxLayout()
        mode_row.addWidget(QLabel("A click marks:"))
        for key, label in zip(
            MODES, ("the main relation", "participant words", "participant centre"), strict=True
        ):
            button = QRadioButton(label)
            button.setObjectName(f"mode_{key}")
            button.toggled.connect(lambda on, k=key: self.set_mode(k) if on else None)
            self.mode_group.addButton(button)
            mode_row.addWidget(button)
        mode_row.addStretch(1)
        self.mode_group.buttons()[0].setChecked(True)
        return mode_row

    def _build_lists(self) -> QHBoxLayout:
        """The scenes of the source and the participants of the selected one."""
        self.scene_list = QListWidget()
        self.scene_list.currentRowChanged.connect(self._on_scene_row)
        self.add_scene_button = QPushButton("Add scene")
        self.add_scene_button.clicked.connect(self.add_scene)
        self.remove_scene_button = QPushButton("Remove scene")
        self.remove_scene_button.clicked.connect(self.remove_scene)
        self.part_list = QListWidget()
        self.part_list.currentRowChanged.connect(lambda _r: self._refresh_chips())
        self.add_part_button = QPushButton("Add participant")
        self.add_part_button.clicked.connect(self.add_participant)
        self.remove_part_button = QPushButton("Remove participant")
        self.remove_part_button.clicked.connect(self.remove_participant)

        lists = QHBoxLayout()
        for caption, lst, buttons in (
            ("Scenes", self.scene_list, (self.add_scene_button, self.remove_scene_button)),
            (
                "Participants of the selected scene",
                self.part_list,
                (self.add_part_button, self.remove_part_button),
            ),
        ):
            col = QVBoxLayout()
            col.addWidget(QLabel(caption))
            lst.setMaximumHeight(130)
            col.addWidget(lst)
            row = QHBoxLayout()
            for b in buttons:
                row.addWidget(b)
            row.addStretch(1)
            col.addLayout(row)
            lists.addLayout(col, 1)
        return lists

    def _build_actions(self) -> QHBoxLayout:
        self.save_button = QPushButton("Save scenes")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        self.revert_button = QPushButton("Revert")
        self.revert_button.clicked.connect(self.reload)
        self.propose_button = QPushButton("Propose from parse")
        self.propose_button.clicked.connect(self.propose)
        self.import_button = QPushButton("Import UCCA XML…")
        self.import_button.clicked.connect(self._import_dialog)
        self.status = QLabel()
        self.status.setWordWrap(True)
        actions = QHBoxLayout()
        for b in (self.save_button, self.revert_button, self.propose_button, self.import_button):
            actions.addWidget(b)
        actions.addStretch(1)
        return actions

    def _update_parser_button(self) -> None:
        from meaningbench.queries.scenes import parser_status

        ok, _, message = parser_status()
        self.propose_button.setEnabled(ok)
        self.propose_button.setToolTip(message)

    # -- loading ----------------------------------------------------------------------

    def set_source(self, group: str | None, source: str) -> None:
        self.group, self.source = group, source
        self.reload()

    def reload(self) -> None:
        specs: list[SceneSpec] = []
        origin = ""
        if self.study is not None and self.group is not None:
            specs = compare_queries.source_scenes(self.study, self.group)
            origin = specs[0].origin if specs else ""
        self.load_specs(specs, origin)

    def load_specs(self, specs: list[SceneSpec], origin: str) -> None:
        self.tokens = specs[0].tokens if specs else tuple(source_words(self.source))
        self.scenes = [EditScene.from_spec(s) for s in specs]
        self.loaded_origin = origin
        notes = {
            "": "No scenes yet: add a scene, then click its main relation and its participants.",
            "manual": "Annotated scenes (used by SAMSA).",
            "ucca": "Scenes imported from UCCA; saving stores your version as annotated scenes.",
            "parser": "Scenes proposed by a parser; check them, then save them as yours.",
        }
        self.origin_label.setText(notes.get(origin, origin))
        self._rebuild_chips()
        self.dirty = False
        self._fill_scene_list(0 if self.scenes else -1)
        self.status.clear()
        self.scenes_edited.emit()

    def _rebuild_chips(self) -> None:
        for chip in self.chips:
            self.chip_layout.removeWidget(chip)
            chip.hide()  # deleteLater waits for the event loop; hidden, it cannot linger
            chip.setParent(None)
            chip.deleteLater()
        self.chips = []
        for i, token in enumerate(self.tokens):
            chip = TokenChip(i, token, self.chip_host)
            chip.clicked.connect(lambda _c=False, k=i: self.toggle_token(k))
            chip.setEnabled(not is_punct(token))
            self.chip_layout.addWidget(chip)
            self.chips.append(chip)
        self.chip_host.updateGeometry()

    # -- editing ----------------------------------------------------------------------

    def current_scene(self) -> EditScene | None:
        row = self.scene_list.currentRow()
        return self.scenes[row] if 0 <= row < len(self.scenes) else None

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode
        button = self.findChild(QRadioButton, f"mode_{mode}")
        if button is not None and not button.isChecked():
            button.setChecked(True)

    def add_scene(self) -> None:
        self.scenes.append(EditScene())
        self._changed(select=len(self.scenes) - 1)
        self.set_mode("main")

    def remove_scene(self) -> None:
        row = self.scene_list.currentRow()
        if 0 <= row < len(self.scenes):
            del self.scenes[row]
            self._changed(select=min(row, len(self.scenes) - 1))

    def add_participant(self) -> None:
        scene = self.current_scene()
        if scene is None:
            return
        scene.participants.append(EditParticipant())
        self._changed(select=self.scene_list.currentRow(), part=len(scene.participants) - 1)
        self.set_mode("participant")

    def remove_participant(self) -> None:
        scene = self.current_scene()
        row = self.part_list.currentRow()
        if scene is not None and 0 <= row < len(scene.participants):
            del scene.participants[row]
            self._changed(select=self.scene_list.currentRow(), part=row - 1)

    def toggle_token(self, index: int) -> None:
        """What a click on word `index` does in the current mode."""
        scene = self.current_scene()
        if scene is None:
            self.status.setText("Add a scene first.")
            return
        part_row = self.part_list.currentRow()
        if self.mode == "main":
            scene.main ^= {index}
        else:
            if not 0 <= part_row < len(scene.participants):
                self.status.setText("Add a participant first.")
                return
            part = scene.participants[part_row]
            words_, centre = part.words, part.centre
            if self.mode == "participant":
                if index in words_:
                    words_.discard(index)
                    centre.discard(index)
                else:
                    words_.add(index)
            else:
                if index in centre:
                    centre.discard(index)
                else:
                    centre.add(index)
                    words_.add(index)
        self._changed(select=self.scene_list.currentRow(), part=part_row)

    def _changed(self, *, select: int, part: int = 0) -> None:
        self.dirty = True
        self._fill_scene_list(select, part)
        self.status.setText("Unsaved changes.")
        self.scenes_edited.emit()

    def _scene_text(self, k: int, scene: EditScene) -> str:
        def text(idx: set[int]) -> str:
            return " ".join(self.tokens[i] for i in sorted(idx)) or "…"

        parts = " · ".join(text(p.words | p.centre) for p in scene.participants)
        return f"{k + 1}. {text(scene.main)}" + (f"  —  {parts}" if parts else "")

    def _fill_scene_list(self, select: int, part: int = 0) -> None:
        self.scene_list.blockSignals(True)
        self.scene_list.clear()
        for k, scene in enumerate(self.scenes):
            self.scene_list.addItem(QListWidgetItem(self._scene_text(k, scene)))
        self.scene_list.setCurrentRow(select)
        self.scene_list.blockSignals(False)
        self._fill_part_list(part)

    def _on_scene_row(self, _row: int) -> None:
        self._fill_part_list(0)

    def _fill_part_list(self, select: int) -> None:
        scene = self.current_scene()
        self.part_list.blockSignals(True)
        self.part_list.clear()
        if scene is not None:
            for k, p in enumerate(scene.participants):
                words_ = " ".join(self.tokens[i] for i in sorted(p.words | p.centre))
                centre = " ".join(self.tokens[i] for i in sorted(p.centre))
                text = (words_ or "(click its words)") + (
                    f"   [centre: {centre}]" if centre else ""
                )
                item = QListWidgetItem(text + ("   (remote)" if p.remote else ""))
                item.setForeground(Qt.GlobalColor.black)
                item.setBackground(QColor(PARTICIPANT_COLOURS[k % len(PARTICIPANT_COLOURS)][0]))
                self.part_list.addItem(item)
            if scene.participants:
                self.part_list.setCurrentRow(max(0, min(select, len(scene.participants) - 1)))
        self.part_list.blockSignals(False)
        self._refresh_chips()
        self._update_buttons()

    def _refresh_chips(self) -> None:
        scene = self.current_scene()
        pal = self.palette()
        plain_fill = pal.base().color().name()
        plain_text = pal.text().color().name()
        plain_border = pal.mid().color().name()
        selected_part = self.part_list.currentRow()
        for chip in self.chips:
            i = chip.index
            look = ("", plain_fill, plain_border, plain_text, False, 1)
            if scene is not None:
                for k, part in enumerate(scene.participants):
                    light, strong = PARTICIPANT_COLOURS[k % len(PARTICIPANT_COLOURS)]
                    width = 2 if k == selected_part else 1
                    if i in part.centre:
                        look = ("centre", strong, strong, "#ffffff", True, width)
                    elif i in part.words:
                        look = ("participant", light, strong, "#1d2127", False, width)
                if i in scene.main:
                    look = ("main", MAIN_FILL, MAIN_BORDER, "#1d2127", True, 2)
            role, fill, border, text, bold, width = look
            chip.set_look(role, fill, border, text, bold=bold, width=width)

    def _update_buttons(self) -> None:
        has_scene = self.current_scene() is not None
        self.remove_scene_button.setEnabled(has_scene)
        self.add_part_button.setEnabled(has_scene)
        self.remove_part_button.setEnabled(has_scene and self.part_list.currentRow() >= 0)
        self.save_button.setEnabled(self.group is not None and self.study is not None)

    # -- storing ----------------------------------------------------------------------

    def specs(self) -> list[SceneSpec]:
        return [s.to_spec(self.tokens, k) for k, s in enumerate(self.scenes)]

    def save(self) -> bool:
        if self.study is None or self.group is None:
            return False
        specs = self.specs()
        for k, spec in enumerate(specs, 1):
            try:
                spec.validate()
            except ValueError as exc:
                self.status.setText(f"Scene {k}: {exc}.")
                return False
        self.runner.run_now(save_scenes(self.study, self.group, specs))
        self.dirty = False
        self.loaded_origin = "manual"
        self.origin_label.setText("Annotated scenes (used by SAMSA).")
        self.status.setText(f"Saved {len(specs)} scene(s). Re-run SAMSA to update its scores.")
        self.scenes_saved.emit(self.group)
        return True

    def propose(self) -> None:
        from meaningbench.queries.scenes import parser_status, propose_scenes

        ok, _, message = parser_status()
        if not ok:
            self.status.setText(message)
            return
        specs = propose_scenes([self.source])[0]
        self.load_specs(specs, "parser")
        self.dirty = True
        self.status.setText(f"{len(specs)} scene(s) proposed by {message}; save to keep them.")

    def import_ucca(self, paths: list[Path]) -> str:
        summary: str = self.runner.run_now(import_ucca_files(self.study, paths))
        self.reload()
        self.status.setText(summary)
        return summary

    def _import_dialog(self) -> None:
        if self.study is None:
            return
        files, _ = QFileDialog.getOpenFileNames(
            self, "Import UCCA XML", "", "UCCA XML (*.xml);;All files (*)"
        )
        if files:
            from meaningbench.errors import UserError

            try:
                self.import_ucca([Path(f) for f in files])
            except UserError as exc:
                self.status.setText(str(exc))
