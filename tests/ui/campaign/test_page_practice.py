"""The Campaign page's Practice column: each rater's verdict against the pass mark and, per
attempt, the practice items close enough, as the kits brought them back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meaningbench.annotation.practice import add_practice
from meaningbench.annotation.protocols import PracticeOptions, set_protocol
from meaningbench.db.study import copy_study, open_study
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.making import make_kits
from meaningbench.queries.campaign import RATER_COLUMNS
from tests.annotation.test_practice_pass_mark import PRACTICE
from tests.kits.campaign_helpers import lead_study, rate_kit
from tests.kits.test_kit_practice import _attempt
from tests.ui.campaign.test_page import _campaign_page, _table


def test_the_practice_column_shows_each_raters_attempts(
    window: Any, qtbot: Any, tmp_path: Path
) -> None:
    path = tmp_path / "lead.mbstudy"
    lead = lead_study(path, seed=2, n_sources=4)
    try:
        add_practice(lead, PRACTICE)
        set_protocol(lead, practice=PracticeOptions(2, 10.0, 2, "flag", out_of=3))
        make_kits(lead, ["ana", "ben", "carla"], tmp_path / "kits")
    finally:
        lead.close()
    kits, back = tmp_path / "kits", tmp_path / "back"
    back.mkdir()
    _attempt(kits / "ana.mbkit", "ana", [75, 10, 95])
    _attempt(kits / "ben.mbkit", "ben", [0, 100, 0])
    _attempt(kits / "ben.mbkit", "ben", [0, 100, 0])  # out of attempts: rates, flagged
    for rater in ("ana", "ben"):
        rate_kit(kits / f"{rater}.mbkit", rater, limit=3)
        copy_study(kits / f"{rater}.mbkit", back / f"{rater}.mbkit")
    lead = open_study(path)
    try:
        collect_kits(lead, back)
    finally:
        lead.close()

    page = _campaign_page(window, qtbot, path)
    column = RATER_COLUMNS.index("Practice")
    practice = {r[0]: r[column] for r in _table(page.raters)}
    assert practice == {
        "ana": "passed · 3/3",
        "ben": "flagged · 0/3, 0/3",
        "carla": "not started",  # her kit is not back: none of her practice here yet
    }
