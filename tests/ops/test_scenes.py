"""The scene editor's writes through the ops, on a real study: scenes saved, imported from
UCCA XML and proposed are stored as the source's rows with their origin, the source group
is named in `StudyChanges.scenes`, and an import that matches no source stores nothing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from meaningbench.core.keys import source_group_key
from meaningbench.db.study import Study
from meaningbench.errors import UserError
from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.ops.scenes import (
    import_ucca_files,
    import_ucca_job,
    propose_scenes_job,
    save_scenes,
)
from meaningbench.runtime import JobContext
from tests.analysis.studybuild import add_items
from tests.metrics.structural.test_ucca_import import DATA as UCCA
from tests.metrics.structural.test_ucca_import import STORM
from tests.ops.study_rows import every_row, rows

SCENES = "SELECT source_group, origin, COUNT(*) FROM scene GROUP BY source_group, origin"
OTHER = "The cat sat on the mat."


def test_saved_scenes_replace_the_sources_scenes(new_study: Study) -> None:
    add_items(new_study, [(OTHER, "The cat sat.", "A")])
    group = source_group_key(OTHER)
    words = OTHER.split()
    one = [SceneSpec(tokens=words, main_relation=(2,))]
    assert save_scenes(new_study, group, one)(JobContext()).scenes == {group}
    two = [SceneSpec(tokens=words[:3], main_relation=(2,)), SceneSpec(words[3:], (0,))]
    changes = save_scenes(new_study, group, two)(JobContext())
    assert changes.scenes == {group} and not changes.everything
    assert rows(new_study.path, SCENES) == [(group, "manual", 2)]
    stored = rows(new_study.path, "SELECT main_relation FROM scene ORDER BY position")
    assert stored == [("[2]",), ("[0]",)]


def test_ucca_passages_become_the_matching_sources_scenes(new_study: Study) -> None:
    add_items(new_study, [(STORM, "The storm passed.", "A"), (OTHER, "The cat sat.", "A")])
    wrote = import_ucca_job(new_study, [UCCA / "storm.xml"])(JobContext())
    storm = source_group_key(STORM)
    assert wrote.changes.scenes == {storm}
    assert (wrote.value.passages, wrote.value.matched_groups, wrote.value.scenes) == (1, 1, 3)
    assert rows(new_study.path, SCENES) == [(storm, "ucca", 3)]
    # The scene editor's form of it: the same write, its report in words.
    said = import_ucca_files(new_study, [UCCA / "storm.xml"])(JobContext())
    assert said.changes.scenes == {storm} and "3 scene(s) stored" in said.value
    assert rows(new_study.path, SCENES) == [(storm, "ucca", 3)]  # replaced, not added


def test_passages_that_match_no_source_are_refused_and_store_nothing(new_study: Study) -> None:
    add_items(new_study, [(OTHER, "The cat sat.", "A")])
    before = every_row(new_study.path)
    for job in (import_ucca_job, import_ucca_files):
        with pytest.raises(UserError, match="nothing was stored"):
            job(new_study, [UCCA / "storm.xml"])(JobContext())
    assert every_row(new_study.path) == before


def _whole(sources: Sequence[str]) -> list[list[SceneSpec]]:
    """A stand-in for the dependency parser: one scene over each source."""
    return [[SceneSpec(tokens=src.split(), main_relation=(1,))] for src in sources]


def test_proposed_scenes_fill_the_sources_without_any(new_study: Study) -> None:
    add_items(new_study, [(STORM, "The storm passed.", "A"), (OTHER, "The cat sat.", "A")])
    save_scenes(new_study, source_group_key(OTHER), _whole([OTHER])[0])(JobContext())
    wrote = propose_scenes_job(new_study, propose=_whole)(JobContext())
    assert (wrote.value.groups, wrote.value.scenes, wrote.value.skipped) == (1, 1, 1)
    assert wrote.changes.everything  # the report names no source: every screen reloads
    assert sorted(rows(new_study.path, SCENES)) == sorted(
        [(source_group_key(OTHER), "manual", 1), (source_group_key(STORM), "parser", 1)]
    )
    again = propose_scenes_job(new_study, overwrite=True, propose=_whole)(JobContext()).value
    assert (again.groups, again.skipped) == (2, 0)
    # Proposals replace proposals; the scenes saved by hand stay beside them.
    assert sorted(rows(new_study.path, SCENES)) == sorted(
        [
            (source_group_key(OTHER), "manual", 1),
            (source_group_key(OTHER), "parser", 1),
            (source_group_key(STORM), "parser", 1),
        ]
    )
