"""The rating mapping table of bi-encoder training: parsing, validation, and the targets."""

from __future__ import annotations

import json

import pytest

from meaningbench.errors import UserError
from meaningbench.training import TrainRequest
from meaningbench.training.labels import (
    OPUSPARCUS,
    format_label_map,
    map_score,
    parse_label_map,
)


def test_the_opusparcus_map_reads_as_rows() -> None:
    rows = parse_label_map(OPUSPARCUS)
    assert rows == (
        (4.0, 0.85), (3.5, 0.70), (3.0, 0.50), (2.5, 0.30), (2.0, 0.20), (1.5, 0.10), (1.0, 0.05),
    )  # fmt: skip
    assert parse_label_map(format_label_map(rows)) == rows
    # Order, spaces and separators do not matter; 'linear' and nothing mean no table.
    assert parse_label_map(" 1=0.05; 4 = 0.85 ") == ((4.0, 0.85), (1.0, 0.05))
    for linear in ("linear", "LINEAR", "", None):
        assert parse_label_map(linear) is None
    assert format_label_map(None) == "linear"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4=0.85,3.5", "'3.5': write SCORE=TARGET"),
        ("4=high", "the target 'high' is not a number"),
        ("four=0.8", "the score 'four' is not a number"),
        ("4=1.2", "the target 1.2 is outside 0–1"),
        ("4=-0.1", "the target -0.1 is outside 0–1"),
        ("4=0.8,4.0=0.9", "the score 4 is given twice"),
        ("4=nan", "must be a finite number"),
        (",", "the label map is empty"),
    ],
)
def test_bad_maps_are_refused_naming_the_entry(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_label_map(text)


def test_a_request_checks_the_map_against_its_kind(tmp_path) -> None:
    table = parse_label_map(OPUSPARCUS)
    TrainRequest(study=tmp_path, out_dir=tmp_path, kind="bi-encoder", label_map=table).validate()
    with pytest.raises(UserError, match="--label-map is for --kind bi-encoder"):
        TrainRequest(study=tmp_path, out_dir=tmp_path, label_map=table).validate()
    with pytest.raises(UserError, match="z-scores are not on that scale"):
        TrainRequest(
            study=tmp_path, out_dir=tmp_path, kind="bi-encoder", label_map=table, z_scores=True
        ).validate()
    with pytest.raises(UserError, match="unknown model kind 'tri-encoder'"):
        TrainRequest(study=tmp_path, out_dir=tmp_path, kind="tri-encoder").validate()
    # Each kind has its own augmentation default; an explicit one is kept.
    assert TrainRequest(study=tmp_path, out_dir=tmp_path).augment == (
        "identical", "unrelated", "swap",
    )  # fmt: skip
    assert TrainRequest(study=tmp_path, out_dir=tmp_path, kind="bi-encoder").augment == ()
    assert TrainRequest(
        study=tmp_path, out_dir=tmp_path, kind="bi-encoder", augment=("unrelated",)
    ).augment == ("unrelated",)


def test_a_request_survives_its_json(tmp_path) -> None:
    request = TrainRequest(
        study=tmp_path, out_dir=tmp_path, kind="bi-encoder", label_map=parse_label_map("4=0.85")
    )
    again = TrainRequest.from_json(request.to_json())
    assert again == request
    assert again.learning_config()["label_map"] == [[4.0, 0.85]]
    # A cross-encoder's fingerprint fields are those it had before bi-encoders existed.
    assert "kind" not in TrainRequest(study=tmp_path, out_dir=tmp_path).learning_config()


TOY = "0=0,10=0.2,20=0.8"  # on a 0–20 scale: a slow start, then a steep rise


def test_linear_between_interpolates_between_the_two_nearest_rows() -> None:
    table = parse_label_map(TOY)
    assert table is not None
    # Worked by hand: 5 is halfway from 0 (→ 0) to 10 (→ 0.2); 15 halfway from 10 to 20
    # (→ 0.2 … 0.8); 12.5 a quarter of the way from 10 to 20: 0.2 + 0.6 / 4.
    for score, expected in ((5, 0.1), (15, 0.5), (12.5, 0.35), (2.5, 0.05), (19, 0.74)):
        assert map_score(score, table, between="linear") == pytest.approx(expected, abs=1e-12)
    # Listed scores give their own targets, the ends included.
    for score, expected in ((0, 0.0), (10, 0.2), (20, 0.8)):
        assert map_score(score, table, between="linear") == expected


def test_nothing_is_extrapolated_and_exact_stays_exact() -> None:
    table = parse_label_map("2=0.1,4=0.9")
    assert table is not None
    for outside in (1.0, 1.99, 4.01, 5.0):
        assert map_score(outside, table, between="linear") is None
    # Exact (the default) knows only the listed scores, within the tolerance for means.
    assert map_score(3.0, table) is None
    assert map_score(3.0, table, between="exact") is None
    assert map_score(4.0, table) == 0.9
    assert map_score(2.0 + 1e-9, table) == 0.1


def test_label_between_is_checked_and_kept_in_the_request(tmp_path) -> None:
    table = parse_label_map(TOY)
    linear = TrainRequest(
        study=tmp_path, out_dir=tmp_path, kind="bi-encoder", label_map=table,
        label_between="linear",
    )  # fmt: skip
    linear.validate()
    again = TrainRequest.from_json(json.loads(json.dumps(linear.to_json())))
    assert again == linear and again.label_between == "linear"
    assert again.learning_config()["label_between"] == "linear"
    # A request saved before the choice existed has no such field: its table was exact.
    old = linear.to_json()
    del old["label_between"]
    assert TrainRequest.from_json(old).label_between == "exact"
    # The default leaves the fingerprint as it was, so earlier checkpoints still resume.
    exact = linear.with_changes(label_between="exact")
    assert "label_between" not in exact.learning_config()
    assert exact.learning_config() != linear.learning_config()

    with pytest.raises(UserError, match="unknown --label-between 'spline'"):
        linear.with_changes(label_between="spline").validate()
    with pytest.raises(UserError, match="give --label-map SCORE=TARGET"):
        linear.with_changes(label_map=None).validate()
