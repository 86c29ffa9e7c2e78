"""`kit --top-up --adaptive metrics|systems [--items N]` on real studies: the next round's
items are chosen from the ratings collected, where the ranking is least settled."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.models import Annotator, Item, MetricRun, QueueEntry, Rating, Score
from meaningbench.db.study import Study, create_study, open_study
from tests.annotation.factories import add_items
from tests.fault_tools import file_digest

N_SOURCES, N_SYSTEMS = 40, 3


def _kit(capsys: pytest.CaptureFixture[str], lead: Path, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["kit", str(lead), *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def _scores(study: Study, label: str, values: dict[int, float]) -> None:
    with study.session(write=True) as s:
        run = MetricRun(metric=label, config={}, config_hash=label, label=label, status="done")
        s.add(run)
        s.flush()
        s.add_all(Score(run_id=run.id, item_id=i, value=v) for i, v in values.items())


def _study(
    path: Path, metrics: int = 3, ratings: dict[str, float] | None = None
) -> tuple[list[int], dict[int, str]]:
    """40 sources × 3 systems, overlap 1 of 4, no controls; `metrics` metric runs whose
    scores agree on most items and disagree sharply on some; ana's ratings of every
    fourth item, by system (`ratings`: system → mean, noise ± 5) or by the first metric."""
    study = create_study(path)
    rng = np.random.default_rng(3)
    try:
        ids = add_items(study, N_SOURCES, N_SYSTEMS, seed=5)
        with study.session(write=True) as s:
            cfg = load_settings(s)
            cfg.overlap_k, cfg.pool_size, cfg.seed, cfg.qc_enabled = 1, 4, 11, False
            save_settings(s, cfg)
            system = {int(i): str(y) for i, y in s.execute(select(Item.id, Item.system))}
        quality = rng.uniform(0, 1, len(ids))
        twist = np.zeros(len(ids))
        twist[rng.choice(len(ids), 30, replace=False)] = 1.0
        for m in range(metrics):
            sign = 1.0 if m % 2 == 0 else -1.0
            values = quality + 0.05 * rng.standard_normal(len(ids)) + sign * 0.6 * twist
            _scores(study, f"metric{m}", dict(zip(ids, values.tolist(), strict=True)))
        rated = ids[::4]
        with study.session(write=True) as s:
            ana = Annotator(name="ana", kind="named")
            s.add(ana)
            s.flush()
            for i in rated:
                k = ids.index(i)
                value = (
                    ratings[system[i]] + rng.uniform(-5, 5)
                    if ratings is not None
                    else 100 * quality[k]
                )
                s.add(Rating(item_id=i, annotator_id=ana.id, dimension_id=1, value=float(value)))
    finally:
        study.close()
    return ids, system


def _queue(lead: Path, rater: str) -> list[int]:
    study = open_study(lead)
    try:
        with study.session() as s:
            return [
                int(i)
                for i in s.scalars(
                    select(QueueEntry.item_id)
                    .join(Annotator, Annotator.id == QueueEntry.annotator_id)
                    .where(Annotator.name == rater)
                    .order_by(QueueEntry.position)
                )
            ]
    finally:
        study.close()


def test_a_systems_top_up_asks_for_the_systems_whose_means_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    # system-0 and system-1 are close; system-2 is far below both: its place is settled.
    _ids, system = _study(lead, ratings={"system-0": 60.0, "system-1": 62.0, "system-2": 10.0})
    code, said = _kit(
        capsys, lead, "--top-up", "--adaptive", "systems", "--items", "12",
        "--raters", "dana", "--out", str(tmp_path / "r2"),
    )  # fmt: skip
    assert code == 0, said
    assert "dana-top-up-1.mbkit" in said and "12 items to rate" in said
    asked = _queue(lead, "dana")
    assert len(asked) == 12
    by_system = [system[i] for i in asked]
    assert by_system.count("system-2") <= 2, by_system
    assert {"system-0", "system-1"} <= set(by_system)


def test_a_metrics_top_up_asks_first_where_the_metrics_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    ids, _system = _study(lead)
    code, said = _kit(
        capsys, lead, "--top-up", "--adaptive", "metrics", "--items", "15",
        "--raters", "dana", "--out", str(tmp_path / "r2"),
    )  # fmt: skip
    assert code == 0, said
    asked = _queue(lead, "dana")
    assert len(asked) == 15
    study = open_study(lead)
    try:
        with study.session() as s:
            rows = s.execute(select(Score.item_id, Score.run_id, Score.value)).all()
    finally:
        study.close()
    by_run: dict[int, dict[int, float]] = {}
    for item, run, value in rows:
        by_run.setdefault(int(run), {})[int(item)] = float(value)
    first, second = (by_run[r] for r in sorted(by_run)[:2])
    gap = {i: abs(first[i] - second[i]) for i in ids}
    rated = set(ids[::4])
    others = [gap[i] for i in ids if i not in rated and i not in asked]
    # The items where the metrics part ask first: their gap is far above the rest's.
    assert np.mean([gap[i] for i in asked]) > 2 * np.mean(others)
    assert not rated & set(asked)


def test_without_adaptive_the_round_is_the_first_short_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    ids, _system = _study(lead)
    code, said = _kit(
        capsys, lead, "--top-up", "--items", "5", "--raters", "dana", "--out", str(tmp_path / "k")
    )
    assert code == 0, said
    rated = set(ids[::4])
    assert _queue(lead, "dana") == [i for i in ids if i not in rated][:5]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--adaptive", "metrics"], "add --top-up"),
        (["--items", "3"], "add --top-up"),
        (["--top-up", "--items", "0"], "--items must lie between 1"),
        (["--top-up", "--adaptive", "metrics"], "score the study with two metrics or more"),
    ],
)
def test_a_bad_adaptive_top_up_is_refused_and_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    lead = tmp_path / "lead.mbstudy"
    _study(lead, metrics=1)
    before = file_digest(lead)
    code, said = _kit(capsys, lead, *args, "--raters", "dana", "--out", str(tmp_path / "k"))
    assert code == 2, said
    assert message in said
    assert not (tmp_path / "k").exists() or not any((tmp_path / "k").iterdir())
    assert file_digest(lead) == before
