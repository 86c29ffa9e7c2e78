"""Words for the training dialog, read without widgets: a request, a checkpoint, a loss."""

from __future__ import annotations

from pathlib import Path

from meaningbench.queries.training import checkpoint_lines, loss_text, request_summary
from meaningbench.training.request import TrainRequest
from meaningbench.training.status import RunProgress, TrainingState


def test_the_words_for_a_checkpoint_and_a_loss() -> None:
    assert loss_text(100.0) == "MSE 100.0 (RMSE 10.0)"
    assert loss_text(None) == "–" and loss_text(float("nan")) == "–"
    request = TrainRequest(study=Path("s"), out_dir=Path("o"))
    summary = request_summary(request)
    for part in ("embedded MiniLM", "meaning (mean rating)", "2 epochs", "lr 5e-05",
                 "batch 16", "augmentation identical, unrelated, swap", "hold-out", "seed 0"):  # fmt: skip
        assert part in summary
    state = TrainingState(
        out_dir=Path("o"),
        request=request.with_changes(seeds=(0, 1)),
        runs=[
            RunProgress("seed-0", True, 40, 81.0),
            RunProgress("seed-1", False, 7, 144.0),
        ],
        finished=False,
    )
    lines = checkpoint_lines(state)
    assert lines[0].startswith("A paused training")
    assert lines[1] == "seed-0: finished after 40 steps, best validation MSE 81.0 (RMSE 9.0)"
    assert lines[2] == "seed-1: paused after 7 steps, best validation MSE 144.0 (RMSE 12.0)"
    assert lines[3].startswith("Settings: ") and "seeds 0 1" in lines[3]
