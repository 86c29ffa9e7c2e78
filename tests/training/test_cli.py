"""`meaningbench train` on real study files: a trained model, clear errors, resume options."""

from __future__ import annotations

import json

from meaningbench.cli import main
from meaningbench.db.models import RegisteredModel

from .conftest import add_rated_items


def _tiny_args(study, out, encoder, *extra: str) -> list[str]:
    return [
        "train", str(study.path), "--out", str(out), "--base", str(encoder),
        "--epochs", "1", "--max-steps", "2", "--lr", "3e-3", "--augment", "none",
        "--threads", "1", *extra,
    ]  # fmt: skip


def test_train_prints_json_and_registers(cue_study, tiny_encoder, tmp_path, capsys) -> None:
    out = tmp_path / "cli-model"
    code = main(_tiny_args(cue_study, out, tiny_encoder, "--z", "--name", "mine", "--json"))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["name"] == "mine" and result["registered"] is True
    assert result["test"]["n"] > 0
    assert "seed-0 step 2: validation MSE" in captured.err  # the progress display
    card = json.loads((out / "model_card.json").read_text())
    assert card["config"]["z_scores"] is True
    assert card["data"]["target"].startswith("per-item mean z")
    with cue_study.session() as s:
        assert s.query(RegisteredModel).filter_by(name="mine").one().path == str(out.resolve())


def test_a_study_without_ratings_exits_2(new_study, tiny_encoder, tmp_path, capsys) -> None:
    with new_study.session() as s:
        add_rated_items(s, [{"source": "A b c.", "output": "A b.", "rating": None}])
    code = main(_tiny_args(new_study, tmp_path / "m", tiny_encoder))
    err = capsys.readouterr().err
    assert code == 2
    assert "no current ratings on the dimension 'meaning'" in err
    assert "Traceback" not in err


def test_user_mistakes_exit_2(cue_study, tiny_encoder, tmp_path, capsys) -> None:
    missing = ["train", str(tmp_path / "none.mbstudy"), "--out", str(tmp_path / "m")]
    assert main(missing) == 2
    assert "no such study" in capsys.readouterr().err
    assert main(_tiny_args(cue_study, tmp_path / "m", tiny_encoder, "--augment", "mirror")) == 2
    assert "unknown augmentation mirror" in capsys.readouterr().err
    assert main(_tiny_args(cue_study, tmp_path / "m", tiny_encoder, "--folds", "1")) == 2
    assert main(_tiny_args(cue_study, tmp_path / "m", tiny_encoder, "--resume")) == 2
    assert "no training to resume" in capsys.readouterr().err


def test_resume_takes_the_saved_settings(cue_study, tiny_encoder, tmp_path, capsys) -> None:
    out = tmp_path / "m"
    assert main(_tiny_args(cue_study, out, tiny_encoder, "--no-register")) == 0
    capsys.readouterr()
    # Only --resume: every learning option comes from the saved request.
    assert (
        main(
            [
                "train",
                str(cue_study.path),
                "--out",
                str(out),
                "--resume",
                "--threads",
                "1",
                "--json",
                "--no-register",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["registered"] is False
    # A learning option that differs from the saved one is refused, not silently applied.
    code = main(["train", str(cue_study.path), "--out", str(out), "--resume", "--epochs", "5"])
    assert code == 2
    assert "epochs" in capsys.readouterr().err


def test_train_a_bi_encoder_with_a_label_map(cue_study, tiny_encoder, tmp_path, capsys) -> None:
    out = tmp_path / "bi"
    args = _tiny_args(cue_study, out, tiny_encoder, "--kind", "bi-encoder", "--name", "bi")
    # The cue study's ratings are spread over 0–100: a table that misses them is refused.
    assert main([*args, "--label-map", "100=1,0=0"]) == 2
    err = capsys.readouterr().err
    assert "is not in the label map (it maps 100, 0)" in err and "of item " in err
    assert "(--label-between linear)" in err
    assert main([*args, "--label-between", "linear"]) == 2
    assert "give --label-map SCORE=TARGET" in capsys.readouterr().err
    assert not out.exists()
    assert main([*args, "--label-map", "4=1.5"]) == 2
    assert "the target 1.5 is outside 0–1" in capsys.readouterr().err
    cross = _tiny_args(cue_study, tmp_path / "x", tiny_encoder, "--label-map", "4=0.5")
    assert main(cross) == 2
    assert "--label-map is for --kind bi-encoder" in capsys.readouterr().err

    assert main([*args, "--label-map", "linear", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["kind"] == "bi-encoder" and result["metrics"] == ["sbert_cosine", "bertscore"]
    assert result["test_before"]["n"] == result["test"]["n"] > 0
    with cue_study.session() as s:
        assert s.query(RegisteredModel).filter_by(name="bi").one().metric == "sbert_cosine"
    # A resume keeps the kind: asking for the other one is a conflict, not a new training.
    resume = ["train", str(cue_study.path), "--out", str(out), "--resume"]
    assert main([*resume, "--kind", "cross-encoder"]) == 2
    assert "kind" in capsys.readouterr().err
    assert main([*resume, "--threads", "1"]) == 0
    assert "registered in the study as sbert_cosine@bi and bertscore@bi" in capsys.readouterr().out


def test_a_bi_encoder_reads_its_table_linearly_between_rows(
    cue_study, tiny_encoder, tmp_path, capsys
) -> None:
    out = tmp_path / "between"
    args = _tiny_args(cue_study, out, tiny_encoder, "--kind", "bi-encoder", "--no-register")
    table = "100=1,50=0.3,0=0"  # the cue study's scattered ratings all lie in 0–100
    assert main([*args, "--label-map", table, "--label-between", "linear", "--json"]) == 0
    capsys.readouterr()
    card = json.loads((out / "model_card.json").read_text())
    assert card["mapping"]["kind"] == "table" and card["mapping"]["between"] == "linear"
    assert "linear between the listed ratings, none beyond them" in card["data"]["target"]
    readme = (out / "README.md").read_text()
    assert f"label map `{table}`, linear between the listed ratings" in readme
    # A resume keeps the mode: the exact reading is another training.
    resume = ["train", str(cue_study.path), "--out", str(out), "--resume"]
    assert main([*resume, "--label-between", "exact"]) == 2
    assert "label_between" in capsys.readouterr().err
