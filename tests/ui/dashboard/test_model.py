"""The dashboard's table formats and its themes."""

from __future__ import annotations

import math

import numpy as np

from meaningbench.analysis.sanity import SanityResult, SanityTable
from meaningbench.ui.dashboard.formats import sanity_display
from meaningbench.ui.dashboard.tables import Fmt, format_value


def test_formats() -> None:
    assert format_value(0.12345, Fmt()) == "0.123"
    assert format_value(0.875, Fmt("percent", 1)) == "87.5 %"
    assert format_value(3.0e-9, Fmt("p")) == "3.0e-09"
    assert format_value(0.04, Fmt("p")) == "0.040"
    assert format_value(12.0, Fmt("auto")) == "12" and format_value(0.5, Fmt("auto")) == "0.500"
    assert format_value(float("nan"), Fmt()) == "–" and format_value(None, Fmt()) == "–"
    assert format_value("[0.1, 0.2]", Fmt("num")) == "[0.1, 0.2]"


def test_sanity_layout_is_the_studys() -> None:
    def result(name: str, ident: list[float], unrel: list[float]) -> SanityResult:
        from meaningbench.analysis.sanity import identical_rates, unrelated_rates

        return SanityResult(
            name, len(ident), identical_rates(ident), unrelated_rates(unrel),
            np.array(ident), np.array(unrel),
        )  # fmt: skip

    table = SanityTable({"m": result("m", [100, 96.4, 94.6, 99.5], [0.4, 3.0, 7.0, 1.5])})
    frame, formats, bands = sanity_display(table)
    labels = [formats[c].label for c in frame.columns]
    assert labels == [
        "≥95", "≥96", "≥97", "≥98", "≥99", "=100", "≤5", "≤4", "≤3", "≤2", "≤1", "=0", "pairs"
    ]  # fmt: skip
    # Hand-computed with Python's rounding: 100, 96, 95 (94.6), 100 (99.5 → 100, half even).
    assert frame.loc["m", "identical ≥95"] == 1.0
    assert frame.loc["m", "identical ≥96"] == 0.75
    assert frame.loc["m", "identical =100"] == 0.5
    # 0, 3, 7, 2 (1.5 → 2, half even).
    assert frame.loc["m", "unrelated ≤5"] == 0.75
    assert frame.loc["m", "unrelated ≤2"] == 0.5
    assert frame.loc["m", "unrelated =0"] == 0.25
    assert bands == [(1, 6, "Identical pairs (s, s)"), (7, 12, "Unrelated pairs (s, u)")]
    assert not math.isnan(frame.loc["m", "n"])


def test_plots_follow_the_theme(open_page, synth, qtbot) -> None:
    from PySide6.QtWidgets import QApplication

    from meaningbench.ui.theme import build_palette

    path, _ = synth
    page = open_page(path)
    app = QApplication.instance()
    old = app.palette()
    try:
        app.setPalette(build_palette("dark"))
        qtbot.waitUntil(
            lambda: (
                page.correlations.bars.plot.backgroundBrush().color()
                == build_palette("dark").base().color()
            )
        )
        assert page.correlations.bars.colors.dark
        assert page.heatmap.colors.dark
    finally:
        app.setPalette(old)


def test_page_state_round_trip(open_page, synth, qtbot) -> None:
    path, _ = synth
    page = open_page(path)
    from meaningbench.ui.dashboard.correlations_tab import select_data

    select_data(page.correlations.statistic, "spearman")
    select_data(page.correlations.sort, "name")
    select_data(page.heat_method, "spearman")
    page.tabs.setCurrentIndex(2)
    state = page.save_state()
    other = open_page(path)
    other.restore_state(state)
    assert other.save_state() == state
