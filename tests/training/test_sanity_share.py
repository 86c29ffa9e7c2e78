"""The sanity share: how many identical and unrelated pairs a training adds, on its card,
on the command line, and in a request saved before the share existed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meaningbench.cli import build_parser, main
from meaningbench.commands.train import build_request
from meaningbench.errors import UserError
from meaningbench.training import train_model
from meaningbench.training.augment import control_counts
from meaningbench.training.request import DEFAULT_SANITY_SHARE, TrainRequest

from .conftest import tiny_request

ALL = ("identical", "unrelated", "swap")


def _cli_request(*argv: str) -> TrainRequest:
    return build_request(build_parser().parse_args(["train", "s.mbstudy", "--out", "m", *argv]))


def test_a_short_training_records_the_shares_on_its_card(cue_study, tiny_encoder, tmp_path) -> None:
    out = tmp_path / "shared"
    request = tiny_request(
        cue_study, out, tiny_encoder, augment=ALL, sanity_share=(0.5, 0.2), epochs=1, max_steps=3
    )
    train_model(request)
    card = json.loads((out / "model_card.json").read_text())
    parts = card["split"]["parts"]
    n_rated = 2 * parts["train"]["items"]  # each rated pair in both orders
    n_identical, n_unrelated = control_counts(n_rated, 0.5, 0.2)
    recorded = card["augmentation"]
    assert recorded["augment"] == list(ALL) and recorded["sanity_share"] == [0.5, 0.2]
    assert recorded["train"] == parts["train"]["augmentation"]
    counts = recorded["train"]["counts"]
    assert counts["rated"] == counts["rated-swapped"] == parts["train"]["items"]
    assert counts["identical"] == n_identical
    assert counts["unrelated"] + counts["unrelated-swapped"] == n_unrelated
    assert sum(counts.values()) == parts["train"]["examples"] == n_rated + n_identical + n_unrelated
    shares = recorded["train"]["shares"]
    assert shares["identical"] == pytest.approx(n_identical / parts["train"]["examples"])
    assert shares["identical"] == pytest.approx(0.5, abs=0.01)
    assert shares["unrelated"] == pytest.approx(0.2, abs=0.01)
    assert shares["augmented"] == pytest.approx(1 - counts["rated"] / parts["train"]["examples"])
    assert card["config"]["sanity_share"] == [0.5, 0.2]
    # Validation is augmented the same way; the held-out test pairs never are.
    assert parts["val"]["augmentation"]["shares"]["identical"] == pytest.approx(0.5, abs=0.03)
    assert parts["test"]["augmentation"]["counts"] == {"rated": parts["test"]["items"]}
    readme = (out / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("- Augmentation:"))
    assert line.startswith(
        "- Augmentation: identical, unrelated, swap (sanity shares: identical 0.50, unrelated 0.20)"
    )
    assert f"identical {100 * shares['identical']:.1f} %" in line


def test_per_source_on_the_command_line_trains_one_pair_per_source(
    cue_study, tiny_encoder, tmp_path, capsys
) -> None:
    out = tmp_path / "per-source"
    argv = [
        "train", str(cue_study.path), "--out", str(out), "--base", str(tiny_encoder),
        "--epochs", "1", "--max-steps", "2", "--lr", "3e-3", "--threads", "1",
        "--sanity-share", "per-source", "--no-register", "--json",
    ]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    card = json.loads((out / "model_card.json").read_text())
    train = card["split"]["parts"]["train"]
    assert card["augmentation"]["sanity_share"] is None
    assert "sanity_share" not in card["config"]  # the fingerprint of the old rule
    counts = card["augmentation"]["train"]["counts"]
    assert counts["identical"] == train["groups"]  # one per distinct source
    assert counts["unrelated"] == counts["unrelated-swapped"] <= train["groups"]
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "(one identical and one unrelated pair per source)" in readme


def test_a_card_without_controls_says_so(cue_study, tiny_encoder, tmp_path) -> None:
    out = tmp_path / "plain"
    train_model(tiny_request(cue_study, out, tiny_encoder, epochs=1, max_steps=1))
    card = json.loads((out / "model_card.json").read_text())
    assert card["augmentation"]["train"]["counts"] == {
        "rated": card["split"]["parts"]["train"]["items"]
    }
    assert card["augmentation"]["train"]["shares"]["augmented"] == 0.0
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "- Augmentation: none (no identical or unrelated pairs); training examples: " in readme


def test_the_command_line_reads_the_shares() -> None:
    assert _cli_request().sanity_share == DEFAULT_SANITY_SHARE == (0.6, 0.1)
    assert _cli_request("--sanity-share", "0.3, 0.2").sanity_share == (0.3, 0.2)
    assert _cli_request("--sanity-share", "per-source").sanity_share is None
    for bad in ("lots", "0.3", "0.3,0.2,0.1", "0.3,x"):
        with pytest.raises(UserError, match="give the identical and the unrelated share"):
            _cli_request("--sanity-share", bad)
    with pytest.raises(UserError, match="each share must lie in"):
        _cli_request("--sanity-share=-0.1,0.2").validate()
    with pytest.raises(UserError, match="at most 0.9 of the examples together"):
        _cli_request("--sanity-share", "0.6,0.35").validate()
    _cli_request("--sanity-share", "0.8,0.1").validate()  # the rated pairs keep 10 %


def test_bad_shares_exit_2_before_any_training(cue_study, tmp_path, capsys) -> None:
    argv = ["train", str(cue_study.path), "--out", str(tmp_path / "m")]
    assert main([*argv, "--sanity-share", "0.9,0.1"]) == 2
    assert "--sanity-share 0.9,0.1: the identical and unrelated pairs" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_a_request_saved_before_the_share_keeps_one_pair_per_source() -> None:
    new = TrainRequest(study=Path("s"), out_dir=Path("o"))
    assert new.sanity_share == DEFAULT_SANITY_SHARE
    assert new.learning_config()["sanity_share"] == list(DEFAULT_SANITY_SHARE)
    saved = new.to_json()
    del saved["sanity_share"]  # as a checkpoint written before the option existed
    old = TrainRequest.from_json(saved)
    assert old.sanity_share is None
    # Its fingerprint is the one written then, so its checkpoints still resume.
    assert "sanity_share" not in old.learning_config()
    assert TrainRequest.from_json(new.to_json()) == new
