"""The Agreement tab's figures are `meaningbench agreement`'s to the last digit: one seed,
one number of resamples and splits, one draw scheme."""

from __future__ import annotations

import json

import pytest

from meaningbench.cli import main
from tests.ui.dashboard.conftest import wait_ready


def test_the_tab_and_the_command_give_the_same_intervals(
    open_page, synth, qtbot, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = synth
    page = open_page(path)
    wait_ready(qtbot, page)
    shown = page.quality.agreement
    assert shown is not None
    capsys.readouterr()
    assert main(["agreement", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    for key in ("alpha", "icc", "icc_k", "split_half_r", "spearman_brown"):
        assert getattr(shown, key) == printed[key], key
    for key in ("alpha_ci", "icc_ci", "icc_k_ci", "spearman_brown_ci"):
        assert list(getattr(shown, key)) == printed[key], key
    # The text the tab shows is the command's text too.
    capsys.readouterr()
    assert main(["agreement", str(path)]) == 0
    text = capsys.readouterr().out
    lo, hi = shown.alpha_ci
    assert f"[{lo:.3f}, {hi:.3f}]" in text
