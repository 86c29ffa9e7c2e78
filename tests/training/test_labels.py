"""The rating mapping table of bi-encoder training: parsing, validation, and the targets."""

from __future__ import annotations

import pytest

from meaningbench.errors import UserError
from meaningbench.training import TrainRequest
from meaningbench.training.labels import OPUSPARCUS, format_label_map, parse_label_map


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
