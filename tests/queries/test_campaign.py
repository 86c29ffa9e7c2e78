"""The Campaign page's reads: the figures `meaningbench campaign --json` prints, and their
words, on a lead's study in mid-campaign."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC
from pathlib import Path

import pytest

from meaningbench.cli import main
from meaningbench.queries.campaign import (
    campaign_job,
    coverage_summary,
    has_kits,
    items_shown,
    when,
)
from meaningbench.runtime import JobContext
from tests.kits.campaign_study import campaign_study, ratings_in


@pytest.fixture(scope="module")
def lead(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return campaign_study(tmp_path_factory.mktemp("campaign"))


def test_the_page_reads_what_the_command_prints(
    lead: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["campaign", str(lead), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    figures = campaign_job(lead)(JobContext())
    # The same figures, NaN written as null as the command writes it.
    from meaningbench.core.json_values import clean_json

    assert json.loads(json.dumps(clean_json(figures.to_json()))) == printed
    assert has_kits(figures) and [r["rater"] for r in printed["raters"]] == [
        "ana",
        "ben",
        "carla",
    ]


def test_the_items_counts_in_words_and_the_filters(lead: Path) -> None:
    figures = campaign_job(lead)(JobContext())
    counted = ratings_in(lead)
    assert {c.pair_key: c.ratings for c in figures.items} == counted
    by_n = Counter(counted.values())
    complete = sum(c for n, c in by_n.items() if n >= 2)
    short = [f"{by_n[n]} {'has' if by_n[n] == 1 else 'have'} {n}" for n in (1, 0) if by_n[n]]
    assert coverage_summary(figures) == f"k = 2: {complete} items complete, " + ", ".join(short)
    shown = items_shown(figures, "short")
    assert {c.pair_key for c in shown} == {k for k, n in counted.items() if n < 2}
    assert [c.ratings for c in shown] == sorted(c.ratings for c in shown)
    assert {c.pair_key for c in items_shown(figures, "complete")} == {
        k for k, n in counted.items() if n >= 2
    }
    assert len(items_shown(figures, "all")) == len(counted)


def test_times_are_shown_on_the_leads_clock() -> None:
    assert when(None) == "–"
    # A stored UTC time, to the minute, in the local zone (UTC here unless TZ is set).
    from datetime import datetime

    stamp = "2026-03-01T09:30:59"
    local = datetime(2026, 3, 1, 9, 30, 59, tzinfo=UTC).astimezone()
    assert when(stamp) == local.strftime("%Y-%m-%d %H:%M")
