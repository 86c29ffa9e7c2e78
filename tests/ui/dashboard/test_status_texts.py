"""Each fact is said once: the dashboard's status line does not repeat the status bar."""

from __future__ import annotations

from tests.ui.conftest import open_in
from tests.ui.dashboard.conftest import wait_ready


def test_the_dashboard_status_does_not_repeat_the_status_bar(
    window,  # noqa: F811 - the fixture imported above
    qtbot,
    synth,
) -> None:
    path, _ = synth
    window.show()
    open_in(window, path, qtbot)
    assert window.show_page("dashboard")
    page = window.page("dashboard")
    wait_ready(qtbot, page)
    window.refresh_counts()
    bar = {p.strip() for p in window.status.counts_label.text().split("·")}
    line = {p.strip() for p in page.status.text().split("·")}
    assert bar and line
    assert bar.isdisjoint(line), bar & line
    assert "rated items" in page.status.text()
