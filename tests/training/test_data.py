"""Training targets from a study: per-item means, z-scores, scales, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from meaningbench.db.models import Dimension
from meaningbench.errors import UserError
from meaningbench.training.data import load_targets

from .conftest import add_rated_items


def _rows(ratings: list[float]) -> list[dict]:
    return [
        {"source": f"Source sentence {i}.", "output": f"Output {i}.", "rating": r}
        for i, r in enumerate(ratings)
    ]


def test_target_is_the_mean_of_current_ratings(new_study) -> None:
    with new_study.session() as s:
        add_rated_items(s, _rows([40.0, 80.0]), annotators={"a": 0.0, "b": 10.0, "c": -20.0})
        table = load_targets(s)
    # Hand-computed: item 0 → mean(40, 50, 20) = 36.67; item 1 → mean(80, 90, 60) = 76.67.
    assert table.frame["target"].tolist() == pytest.approx([110 / 3, 230 / 3])
    assert table.frame["n_ratings"].tolist() == [3, 3]
    assert (table.n_items, table.n_ratings, table.n_annotators) == (2, 6, 3)


def test_z_scores_remove_annotator_offsets_and_return_to_the_scale(new_study) -> None:
    ratings = [10.0, 30.0, 50.0, 70.0, 90.0]
    with new_study.session() as s:
        add_rated_items(s, _rows(ratings), annotators={"lenient": 5.0, "harsh": -5.0})
        raw = load_targets(s)
        z = load_targets(s, z=True)
    # Raters that differ only by an offset give each item the same z; rescaled to the mean
    # and SD of the raw item means, the z targets are the raw targets again.
    assert raw.frame["target"].to_numpy() == pytest.approx(ratings)
    assert z.frame["target"].to_numpy() == pytest.approx(ratings)
    assert z.data_hash() != raw.data_hash()


def test_z_targets_follow_per_annotator_standardisation(new_study) -> None:
    a = [20.0, 40.0, 60.0, 80.0]
    b = [50.0, 52.0, 54.0, 90.0]  # a rater with a compressed, skewed use of the scale
    rows = [dict(r, ratings={"a": va, "b": vb}) for r, va, vb in zip(_rows(a), a, b, strict=True)]
    with new_study.session() as s:
        add_rated_items(s, rows)
        table = load_targets(s, z=True)
    # numpy oracle: z per rater (sample SD), item mean z, moved to the mean/SD of raw means.
    za = (np.array(a) - np.mean(a)) / np.std(a, ddof=1)
    zb = (np.array(b) - np.mean(b)) / np.std(b, ddof=1)
    zmean = (za + zb) / 2
    raw = (np.array(a) + np.array(b)) / 2
    expected = raw.mean() + (zmean - zmean.mean()) * raw.std(ddof=1) / zmean.std(ddof=1)
    assert table.frame["target"].to_numpy() == pytest.approx(np.clip(expected, 0, 100))


def test_human_ratings_win_over_aggregate_labels(new_study) -> None:
    rows = _rows([0.0, 0.0])
    rows[0]["ratings"] = {"published-mean": 70.0, "rater": 30.0}
    rows[1]["ratings"] = {"published-mean": 20.0}
    with new_study.session() as s:
        add_rated_items(s, rows, kinds={"published-mean": "aggregate"})
        table = load_targets(s)
    # Item 0 has a human rating (30) and an aggregate label (70): the human one counts;
    # item 1 has only its aggregate label.
    assert table.frame["target"].tolist() == pytest.approx([30.0, 20.0])


def test_a_likert_dimension_is_mapped_to_0_100(new_study) -> None:
    with new_study.session() as s:
        dim = s.query(Dimension).filter_by(name="fluency").one()
        dim.scale, dim.min_value, dim.max_value = "likert", 1.0, 5.0
        s.flush()
        add_rated_items(s, _rows([1.0, 3.0, 5.0]), dimension="fluency")
        table = load_targets(s, dimension="fluency")
    assert table.frame["target"].tolist() == pytest.approx([0.0, 50.0, 100.0])


def test_control_items_and_other_dimensions_are_left_out(new_study) -> None:
    rows = _rows([60.0, 70.0])
    rows.append(
        {"source": "Control.", "output": "Control.", "rating": 99.0, "kind": "control-identical"}
    )
    with new_study.session() as s:
        add_rated_items(s, rows)
        add_rated_items(s, _rows([5.0]), dimension="fluency")
        table = load_targets(s)
    assert table.frame["target"].tolist() == [60.0, 70.0]


def test_a_study_without_ratings_is_a_clear_error(new_study) -> None:
    with new_study.session() as s:
        add_rated_items(s, [{"source": "A.", "output": "B.", "rating": None}])
        with pytest.raises(UserError, match="no current ratings on the dimension 'meaning'"):
            load_targets(s)
        with pytest.raises(UserError, match="no dimension 'adequacy'.*meaning"):
            load_targets(s, dimension="adequacy")


def test_the_data_hash_follows_the_ratings(new_study) -> None:
    with new_study.session() as s:
        add_rated_items(s, _rows([40.0, 80.0]))
        before = load_targets(s).data_hash()
        assert load_targets(s).data_hash() == before
        add_rated_items(s, _rows([10.0]))
        assert load_targets(s).data_hash() != before
