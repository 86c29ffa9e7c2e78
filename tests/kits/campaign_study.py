"""A lead's study in mid-campaign, for the Campaign page's tests and screenshots: the
scripted campaign's 60 items with overlap 2 of 3, kits made, rated through the rating
screen's engine (carla only part of hers), sent back and collected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from meaningbench.db.study import Study, copy_study, open_study
from meaningbench.kits.collecting import collect_kits
from meaningbench.kits.making import make_kits
from tests.cluster.helpers import query
from tests.kits.campaign_helpers import RATERS, lead_study, rate_kit
from tests.kits.test_scripted_campaign import CARLA_RATES


def campaign_study(
    folder: Path,
    raters: tuple[str, ...] = RATERS,
    returned: tuple[str, ...] = RATERS,
    rated: Callable[[Path], None] | None = None,
    prepare: Callable[[Study], None] | None = None,
    seconds: Callable[[int], float] | None = None,
) -> Path:
    """The lead's study in `folder`; the kits are in folder/kits, the returns in
    folder/returned. Only the raters in `returned` rate and send their kit back; `rated`
    sees each of those kits once rated, before it goes back; `prepare` sees the lead's
    study before the kits are made; `seconds(n)` is how long a rater looks at the n-th item."""
    path = folder / "lead.mbstudy"
    study = lead_study(path, seed=1)
    try:
        if prepare is not None:
            prepare(study)
    finally:
        study.close()
    kits, back = folder / "kits", folder / "returned"
    back.mkdir(parents=True)
    study = open_study(path)
    try:
        make_kits(study, raters, kits)
    finally:
        study.close()
    for rater in returned:
        limit = CARLA_RATES if rater == "carla" else None
        rate_kit(kits / f"{rater}.mbkit", rater, limit, seconds, lead=path)
        if rated is not None:
            rated(kits / f"{rater}.mbkit")
        copy_study(kits / f"{rater}.mbkit", back / f"{rater}.mbkit")
    study = open_study(path)
    try:
        collect_kits(study, back)
    finally:
        study.close()
    return path


def ratings_in(path: Path) -> dict[str, int]:
    """Named raters with a current rating of each regular item, by pair key, in SQL."""
    rows = query(
        path,
        "SELECT i.pair_key, COUNT(DISTINCT r.annotator_id) FROM item i "
        "LEFT JOIN rating r ON r.item_id = i.id AND r.state = 'current' AND r.annotator_id "
        "IN (SELECT id FROM annotator WHERE kind = 'named') "
        "WHERE i.kind = 'regular' GROUP BY i.id",
    )
    return {str(k): int(n) for k, n in rows}
