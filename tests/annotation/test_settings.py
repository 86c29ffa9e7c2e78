"""Annotation settings: defaults, round trip through the study file, validation, scales."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import (
    SETTINGS_KEY,
    AnnotationSettings,
    QCMix,
    ensure_seed,
    load_settings,
    save_settings,
)
from meaningbench.db.models import Dimension, StudySetting
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from tests.annotation.factories import add_items


def test_defaults_follow_appraise_and_the_dimension_table(new_study) -> None:
    with new_study.session() as s:
        st = load_settings(s)
    assert st.seed is None
    assert (st.qc.degraded, st.qc.identical, st.qc.repeat) == (10, 5, 5)
    assert st.qc.normal() == 80
    assert st.overlap_k is None
    assert st.diff_highlighting is False
    assert st.same_source_back_to_back is False
    assert [d.name for d in st.active_dimensions()] == ["meaning"]
    assert [d.name for d in st.dimensions] == ["meaning", "fluency", "simplicity"]
    assert "meaning" in st.guidelines.lower()


def test_counts_per_hundred_entries() -> None:
    # 80 normal items → exactly Appraise's 10 degraded, 5 reference, 5 repeat.
    assert QCMix().counts_for(80) == {
        "degraded": 10,
        "identical": 5,
        "repeat": 5,
        "unrelated": 0,
        "word_soup": 0,
    }
    assert QCMix().counts_for(160)["degraded"] == 20
    # 8 normal items: 1 degraded (8·10/80), 0.5 → 1 identical and repeat (half up).
    assert QCMix().counts_for(8) == {
        "degraded": 1,
        "identical": 1,
        "repeat": 1,
        "unrelated": 0,
        "word_soup": 0,
    }
    assert QCMix(unrelated=5, word_soup=5).counts_for(70)["unrelated"] == 5
    assert QCMix().counts_for(0)["degraded"] == 0


def test_round_trip_through_the_file(tmp_path) -> None:
    from meaningbench.db.study import create_study

    study = create_study(tmp_path / "s.mbstudy")
    with study.session() as s:
        st = load_settings(s)
        st.seed = 1234
        st.overlap_k = 2
        st.pool_size = 4
        st.qc = QCMix(degraded=8, identical=4, repeat=4, unrelated=2, word_soup=2)
        st.guidelines = "# Mine\n\nRate **carefully**."
        st.diff_highlighting = True
        st.same_source_back_to_back = True
        st.datasets = ["a"]
        for d in st.dimensions:
            if d.name == "fluency":
                d.active = True
                d.scale = "likert"
        save_settings(s, st)
    study.close()
    study = open_study(tmp_path / "s.mbstudy")
    with study.session() as s:
        back = load_settings(s)
        fluency = s.scalar(select(Dimension).where(Dimension.name == "fluency"))
        assert (fluency.min_value, fluency.max_value, fluency.active) == (1.0, 5.0, True)
    study.close()
    assert back.seed == 1234
    assert (back.overlap_k, back.pool_size) == (2, 4)
    assert back.qc == QCMix(degraded=8, identical=4, repeat=4, unrelated=2, word_soup=2)
    assert back.guidelines.startswith("# Mine")
    assert back.diff_highlighting and back.same_source_back_to_back
    assert back.datasets == ["a"]
    assert [(d.name, d.scale) for d in back.active_dimensions()] == [
        ("meaning", "continuous"),
        ("fluency", "likert"),
    ]


def test_unknown_and_missing_keys_are_tolerated(new_study) -> None:
    with new_study.session() as s:
        s.add(StudySetting(key=SETTINGS_KEY, value={"seed": 7, "from_the_future": [1, 2]}))
    with new_study.session() as s:
        st = load_settings(s)
    assert st.seed == 7
    assert st.qc == QCMix()


def test_seed_is_drawn_once_and_kept(new_study) -> None:
    with new_study.session() as s:
        first = ensure_seed(s)
    with new_study.session() as s:
        assert ensure_seed(s) == first
        assert load_settings(s).seed == first


@pytest.mark.parametrize(
    "change",
    [
        lambda st: setattr(st, "qc", QCMix(degraded=40, identical=20)),
        lambda st: setattr(st, "qc", QCMix(degraded=-1)),
        lambda st: (setattr(st, "overlap_k", 3), setattr(st, "pool_size", 2)),
        lambda st: setattr(st, "overlap_k", 0),
        lambda st: [setattr(d, "active", False) for d in st.dimensions],
    ],
)
def test_invalid_settings_are_refused_with_a_message(new_study, change) -> None:
    with new_study.session() as s:
        st = load_settings(s)
    change(st)
    with pytest.raises(UserError), new_study.session() as s:
        save_settings(s, st)


def test_scale_of_a_rated_dimension_cannot_change(new_study) -> None:
    add_items(new_study, 3)
    sess = AnnotationSession(new_study, "alice")
    item = sess.next_item()
    sess.submit(item.item_id, {"meaning": 40})
    with new_study.session() as s:
        st = load_settings(s)
    st.dimensions[0].scale = "likert"
    with pytest.raises(UserError, match="already has 1 ratings"), new_study.session() as s:
        save_settings(s, st)
    # An unrated dimension can still change scale.
    st.dimensions[0].scale = "continuous"
    st.dimensions[1].scale = "likert"
    with new_study.session() as s:
        save_settings(s, st)


def test_settings_json_is_plain_json() -> None:
    import json

    st = AnnotationSettings(seed=3)
    assert json.loads(json.dumps(st.to_json()))["qc"]["degraded"] == 10
