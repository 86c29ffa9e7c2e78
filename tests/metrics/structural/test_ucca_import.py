"""UCCA standard XML → scenes, and into a study by source text; the `scenes` command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.core.keys import source_group_key
from meaningbench.errors import InputError
from meaningbench.jobs.scene_import import import_ucca
from meaningbench.jobs.scene_store import load_scenes
from meaningbench.metrics.structural.ucca import parse_ucca_xml
from tests.metrics.structural.helpers import add_items

DATA = Path(__file__).parent / "data"
STORM = "After the storm passed, the old fisherman repaired his boat and sailed to Port Isaac."


def test_storm_passage_scenes_follow_the_ucca_graph() -> None:
    p = parse_ucca_xml(DATA / "storm.xml")
    assert p.passage_id == "101"
    assert p.tokens[7] == "fisherman" and p.tokens[16] == "."
    got = [
        (s.main_relation, [(x.tokens, x.centre, x.remote) for x in s.participants])
        for s in p.scenes
    ]
    assert got == [
        # "the storm" [storm] passed
        ((3,), [((1, 2), (2,), False)]),
        # "the old fisherman" [fisherman] repaired "his boat" [boat]
        ((8,), [((5, 6, 7), (7,), False), ((9, 10), (10,), False)]),
        # the fisherman (a remote participant) sailed "to Port Isaac" [Port Isaac]
        ((12,), [((5, 6, 7), (7,), True), ((13, 14, 15), (14, 15), False)]),
    ]
    assert [s.position for s in p.scenes] == [0, 1, 2]
    assert all(s.origin == "ucca" for s in p.scenes)


def test_participant_scene_and_implicit_unit() -> None:
    p = parse_ucca_xml(DATA / "window.xml")
    broken, said = p.scenes
    assert p.tokens[broken.main_relation[0]] == "broken"
    # "The window" [window], and an implicit agent: a participant without words
    assert broken.participants[0].centre == (1,)
    assert broken.participants[1].implicit
    # "The window was broken" is a participant of "said"; its minimal centre is its
    # main relation, "broken"
    assert said.participants[0].tokens == (0, 1, 2, 3)
    assert said.participants[0].centre == (3,)
    assert said.participants[1].centre == (5,)


def test_bad_xml_is_an_input_error() -> None:
    with pytest.raises(InputError, match="well-formed"):
        parse_ucca_xml(b"<root><layer>")
    with pytest.raises(InputError, match="not UCCA standard XML"):
        parse_ucca_xml(b"<passage id='1'/>")
    with pytest.raises(InputError, match="no terminals"):
        parse_ucca_xml(b"<root passageID='1'><layer layerID='0'/></root>")


def test_import_matches_passages_to_sources_by_text(new_study) -> None:
    add_items(new_study, [(STORM, "The storm passed.", "A"), (STORM, "Nothing.", "B")])
    add_items(new_study, [("An unrelated sentence.", "Unrelated.", "A")])
    with new_study.session() as s:
        report = import_ucca(s, [DATA])
    assert (report.files, report.passages, report.matched_groups, report.scenes) == (2, 2, 1, 3)
    assert len(report.unmatched) == 1 and "102" in report.unmatched[0]
    with new_study.session() as s:
        scenes = load_scenes(s)
    assert set(scenes) == {source_group_key(STORM)}
    assert [len(sc.participants) for sc in scenes[source_group_key(STORM)]] == [1, 2, 2]
    # importing again replaces, it does not duplicate
    with new_study.session() as s:
        import_ucca(s, [DATA / "storm.xml"])
        assert len(load_scenes(s)[source_group_key(STORM)]) == 3


def test_scenes_command_imports_lists_and_refuses_what_matches_nothing(
    new_study, capsys: pytest.CaptureFixture[str]
) -> None:
    add_items(new_study, [(STORM, "The storm passed.", "A")])
    path = str(new_study.path)
    assert main(["scenes", path, "--import-ucca", str(DATA / "storm.xml")]) == 0
    assert "3 scene(s) stored for 1 source sentence(s)" in capsys.readouterr().out

    assert main(["scenes", path, "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["origins"] == {"ucca": 3}
    assert [s["main_relation"] for s in rows[0]["scenes"]] == ["passed", "repaired", "sailed"]
    assert rows[0]["scenes"][2]["participants"][1] == {
        "text": "to Port Isaac",
        "centre": "Port Isaac",
    }

    assert main(["scenes", path, "--import-ucca", str(DATA / "window.xml")]) == 2
    assert "matches a source sentence" in capsys.readouterr().err
    assert main(["scenes", path, "--import-ucca", str(DATA / "missing.xml")]) == 2


def test_propose_without_a_parser_says_how_to_get_one(
    new_study, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine without spaCy, whether or not this one has it: the import system reports
    # a module mapped to None as absent.
    monkeypatch.setitem(sys.modules, "spacy", None)
    assert main(["scenes", str(new_study.path), "--propose"]) == 2
    assert "spaCy" in capsys.readouterr().err
