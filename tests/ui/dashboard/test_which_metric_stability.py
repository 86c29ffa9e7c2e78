"""The "Which metric" tab's stopping signal on a real study file: the query's sentences
and bars, computed in a worker after each ranking, and again as ratings arrive."""

from __future__ import annotations

from pathlib import Path

from meaningbench.annotation.session import AnnotationSession
from meaningbench.queries.which_metric import compute_stability
from meaningbench.runtime.changes import StudyChanges


def _wait_signal(qtbot, tab, ratings: int | None = None) -> None:  # noqa: ANN001
    def ready() -> bool:
        st = tab.stability
        return (
            st is not None
            and tab.stability_job is None
            and not tab.computing
            and (ratings is None or st.ratings == ratings)
        )

    qtbot.waitUntil(ready, timeout=120_000)


def _open_tab(open_page, path: Path, qtbot):  # noqa: ANN001, ANN202
    page = open_page(path)
    tab = page.which_metric
    page.tabs.setCurrentWidget(tab)
    _wait_signal(qtbot, tab)
    return page, tab


def _shown(tab) -> tuple[str, str, str]:  # noqa: ANN001
    view = tab.stability_view
    return view.sentence.text(), view.trend.text(), view.basis.text()


def test_the_tab_says_whether_the_ranking_has_settled(open_page, synth, qtbot) -> None:
    path, _facts = synth
    _page, tab = _open_tab(open_page, path, qtbot)
    expected = compute_stability(path, tab.result.options)
    sentence, trend, basis = _shown(tab)
    verdict = expected.verdict()
    assert verdict in ("settled — you can stop rating", "not settled — keep rating")
    assert tab.stability_view.verdict.text() == f"{verdict.capitalize()}."
    assert sentence == expected.sentence()
    assert expected.sentence().startswith("The top cluster ")
    assert "of resamples agree" in sentence
    assert trend == expected.trend_sentence() and trend
    assert f"{expected.ratings:,} human ratings" in basis
    assert tab.stability_panel.showing_message is False
    # The current top cluster is the one the ranking table shows as cluster 1.
    top = tuple(sorted(m for m, c in tab.result.ranking.clusters.items() if c == 1))
    assert expected.top == top
    bars = tab.stability_view.bars.points
    assert bars == [(p.fraction, p.ratings, p.agreement) for p in expected.trend_points]
    assert [round(f, 2) for f, _n, _a in bars] == [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def test_new_ratings_broadcast_update_the_signal(open_page, synth, qtbot) -> None:
    path, facts = synth
    page, tab = _open_tab(open_page, path, qtbot)
    before = tab.stability.ratings
    rated = facts.item_ids[::6][:12]
    session = AnnotationSession(page.context.study, "newcomer")
    for k, item_id in enumerate(rated):
        session.submit(item_id, {"meaning": float(10 + 7 * k)})
    page.context.runner.broadcast(StudyChanges.of(ratings=rated))
    _wait_signal(qtbot, tab, ratings=before + 12)
    expected = compute_stability(path, tab.result.options)
    assert expected.ratings == before + 12
    sentence, trend, basis = _shown(tab)
    assert sentence.endswith(expected.sentence()) and trend == expected.trend_sentence()
    assert f"{before + 12:,} human ratings" in basis
    # The newest ratings are the last share of the timeline: the 100 % bar holds them.
    assert tab.stability_view.bars.points[-1][1] == before + 12
