"""Exports: every plot as PNG and SVG, every table as CSV and LaTeX, the study as HTML."""

from __future__ import annotations

import xml.dom.minidom
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PySide6.QtGui import QImage
from PySide6.QtSvg import QSvgRenderer

from meaningbench.analysis.live import correlation_table
from meaningbench.db.study import open_study


def _check_png(path: Path) -> None:
    image = QImage(str(path))
    assert not image.isNull(), f"{path.name} is not a readable PNG"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert image.width() >= 1600
    # Something is drawn: more than a handful of colours.
    small = image.scaled(200, 150)
    colours = {small.pixel(x, y) for x in range(0, 200, 4) for y in range(0, 150, 4)}
    assert len(colours) > 5


def _check_svg(path: Path) -> None:
    doc = xml.dom.minidom.parse(str(path))
    assert doc.documentElement.tagName == "svg"
    assert QSvgRenderer(str(path)).isValid()
    assert doc.getElementsByTagName("path") or doc.getElementsByTagName("polyline")


def test_plots_export_png_and_svg(open_page, synth, tmp_path) -> None:
    path, facts = synth
    page = open_page(path)
    for panel in (
        page.correlations.bars_panel,
        page.correlations.scatter_panel,
        page.heat_panel,
    ):
        for fmt, check in (("png", _check_png), ("svg", _check_svg)):
            out = tmp_path / f"{panel.name}.{fmt}"
            panel.export(fmt, str(out))
            check(out)
    svg = (tmp_path / "bars.svg").read_text(encoding="utf-8")
    for name in facts.metric_names:
        assert name in svg  # tick labels are text, not outlines


def test_closed_paths_survive_the_svg_export(open_page, synth, tmp_path) -> None:
    """Qt 6.10+ closes rectangles with "Z"; pyqtgraph 0.14 alone raises on them."""
    path, _ = synth
    page = open_page(path)
    out = tmp_path / "bars.svg"
    page.correlations.bars_panel.export("svg", str(out))
    doc = xml.dom.minidom.parse(str(out))
    paths = [p.getAttribute("d") for p in doc.getElementsByTagName("path")]
    assert any(d.rstrip().endswith("Z") for d in paths)
    assert not any("Z0" in d or "Z-" in d for d in paths)


def test_tables_export_csv_and_latex(open_page, synth, tmp_path) -> None:
    path, facts = synth
    page = open_page(path)
    stats_panel = page.correlations.stats_panel
    stats_panel.export("csv", str(tmp_path / "c.csv"))
    stats_panel.export("tex", str(tmp_path / "c.tex"))
    frame = pd.read_csv(tmp_path / "c.csv", index_col="metric")
    with open_study(path) as study:
        expected = correlation_table(study, n_boot=1000, seed=0).to_frame()
    assert set(frame.index) == set(facts.metric_names)
    for name in facts.metric_names:
        for column in ("pearson", "pearson_ci_low", "spearman", "kendall", "r2", "rmse"):
            assert frame.loc[name, column] == pytest.approx(expected.loc[name, column], rel=1e-12)
    tex = (tmp_path / "c.tex").read_text(encoding="utf-8")
    assert r"\begin{tabular}" in tex and r"\bottomrule" in tex
    for name in facts.metric_names:
        assert name in tex
    for panel in (page.quality.summary_panel, page.quality.loo_panel, page.quality.qc_panel):
        panel.export("csv", str(tmp_path / f"{panel.name}.csv"))
        panel.export("tex", str(tmp_path / f"{panel.name}.tex"))
        assert len(pd.read_csv(tmp_path / f"{panel.name}.csv")) > 0
        assert r"\begin{tabular}" in (tmp_path / f"{panel.name}.tex").read_text(encoding="utf-8")
    loo = pd.read_csv(tmp_path / "agreement-annotators.csv", index_col="annotator")
    assert sorted(loo.index) == sorted(facts.raters)
    heat = tmp_path / "heat.csv"
    page.heat_panel.export("csv", str(heat))
    matrix = pd.read_csv(heat, index_col=0)
    assert np.allclose(np.diag(matrix.to_numpy()), 1.0)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for key, value in attrs:
            if key in ("src", "href") and value and not value.startswith("#"):
                self.external.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_study_report_is_a_self_contained_html_file(open_page, synth, qtbot, tmp_path) -> None:
    path, facts = synth
    page = open_page(path)
    dest = tmp_path / "report.html"
    handle = page.export_report(dest)
    with qtbot.waitSignal(handle.finished, timeout=30_000):
        pass
    assert handle.outcome == "done", handle.failure and handle.failure.trace
    assert page.last_report == dest
    html = dest.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    parser = _Collect()
    parser.feed(html)
    assert not parser.external, "no links to files or the network"
    assert "svg" in parser.tags and "table" in parser.tags
    text = " ".join(parser.text)
    for name in facts.metric_names:
        assert name in text
    assert "Agreement" in text and "Rater quality control" in text
    assert "Which metric" in text and "significance clusters" in text  # ranked, with methods


def test_export_everything_to_a_folder(open_page, synth, tmp_path) -> None:
    path, _ = synth
    page = open_page(path)
    written = page.export_all(tmp_path / "all")
    names = {p.name for p in written}
    for expected in ("bars.png", "bars.svg", "scatter.svg", "correlations.csv", "rater-qc.tex"):
        assert expected in names
    assert "sanity-checks.csv" not in names  # not run: nothing to write
    for p in written:
        assert p.stat().st_size > 0


def test_export_everything_includes_the_heatmap_when_its_tab_was_never_shown(
    open_page, synth, tmp_path
) -> None:
    from PySide6.QtGui import QImage

    path, _ = synth
    page = open_page(path)
    assert page.tabs.currentWidget() is not page.heat_panel  # the heatmap is not on screen
    written = {p.name: p for p in page.export_all(tmp_path / "all")}
    for name in ("metric-correlations.png", "metric-correlations.svg", "metric-correlations.csv"):
        assert name in written, sorted(written)
    image = QImage(str(written["metric-correlations.png"]))
    assert image.width() > 200 and image.height() > 150
    assert len(set(image.pixel(x, image.height() // 2) for x in range(image.width()))) > 3
