"""Choosing a study's protocol: stored, shown by `info`, fixed once raters have rated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.annotation.protocols import set_protocol, study_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.study import create_study, open_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items


@pytest.fixture
def study_path(tmp_path: Path) -> Path:
    path = tmp_path / "p.mbstudy"
    st = create_study(path)
    add_items(st, 4, 2)
    with st.session() as s:
        cfg = load_settings(s)
        cfg.seed, cfg.qc_enabled = 5, False
        save_settings(s, cfg)
    st.close()
    return path


def test_a_new_study_rates_by_direct_assessment(study_path: Path) -> None:
    st = open_study(study_path)
    try:
        assert study_protocol(st).protocol == "da"
    finally:
        st.close()


def test_the_protocol_is_stored_in_the_file_and_shown_by_info(study_path, capsys) -> None:
    assert main(["protocol", str(study_path), "--set", "esa", "--source-spans"]) == 0
    assert "protocol: esa" in capsys.readouterr().out
    st = open_study(study_path)
    try:
        choice = study_protocol(st)
    finally:
        st.close()
    assert (choice.protocol, choice.source_spans, choice.hidden_number) == ("esa", True, False)
    assert main(["info", str(study_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["annotation_protocol"]["protocol"] == "esa"
    assert info["annotation_protocol"]["source_spans"] is True
    assert main(["info", str(study_path)]) == 0
    assert "annotation protocol: esa — error span annotation" in capsys.readouterr().out


def test_likert_turns_the_active_dimensions_into_five_labelled_points(study_path) -> None:
    st = open_study(study_path)
    try:
        set_protocol(st, "likert", hidden_number=True)
        sess = AnnotationSession(st, "ana")
        [scale] = sess.scales
        assert (scale.scale, scale.min_value, scale.max_value) == ("likert", 1.0, 5.0)
        assert len(scale.point_labels) == 5 and scale.point_labels[0] == "no meaning preserved"
        assert sess.settings.hidden_number
        item = sess.current()
        assert item is not None
        with pytest.raises(UserError, match="outside 1–5"):
            sess.submit(item.item_id, {"meaning": 70.0})
    finally:
        st.close()


def test_the_protocol_cannot_change_once_raters_have_rated(study_path) -> None:
    st = open_study(study_path)
    try:
        set_protocol(st, "esa")
        sess = AnnotationSession(st, "ana")
        item = sess.current()
        assert item is not None
        sess.submit(item.item_id, {"meaning": 40.0})
        with pytest.raises(UserError, match="1 ratings under the 'esa' protocol"):
            set_protocol(st, "da")
        set_protocol(st, hidden_number=True)  # an option of the same protocol may change
        assert study_protocol(st).hidden_number
    finally:
        st.close()


def test_an_unknown_protocol_is_refused_with_the_choices(study_path) -> None:
    st = open_study(study_path)
    try:
        with pytest.raises(UserError, match="choose one of da, esa, sxs, likert"):
            set_protocol(st, "ranking")
    finally:
        st.close()


def test_ratings_brought_in_by_merge_lock_the_protocol(study_path, tmp_path, capsys) -> None:
    from meaningbench.annotation.merge import merge_ratings
    from meaningbench.db.study import copy_study

    st = open_study(study_path)
    try:
        set_protocol(st, "esa")
    finally:
        st.close()
    copy = copy_study(study_path, tmp_path / "rater.mbstudy")
    rater = open_study(copy)
    try:
        sess = AnnotationSession(rater, "ben")
        item = sess.current()
        assert item is not None
        sess.submit(item.item_id, {"meaning": 40.0})
    finally:
        rater.close()
    st = open_study(study_path)
    try:
        assert merge_ratings(st, copy).ratings_added == 1
    finally:
        st.close()
    assert main(["protocol", str(study_path), "--set", "da"]) != 0
    assert "1 ratings under the 'esa' protocol" in capsys.readouterr().err
    st = open_study(study_path)
    try:
        assert study_protocol(st).protocol == "esa"
    finally:
        st.close()
