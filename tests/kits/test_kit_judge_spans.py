"""Judge spans in blind kits: the hidden controls carry the judge's spans as the regular
items do, and nothing about those spans tells them apart.

The judge scores the items the study holds when it runs; a queue's controls are made with
the queue. A kit whose regular items have spans and whose controls have none is refused,
the queues kept, so that scoring again (only the items without a score) covers the
controls; the kit made then holds one judge score per item, under one run."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select

from meaningbench.annotation.protocols import set_protocol
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import load_settings, save_settings
from meaningbench.cli import main
from meaningbench.db.models import Item, MetricRun, QueueEntry, Score
from meaningbench.db.study import Study, open_study
from meaningbench.errors import UserError
from meaningbench.kits.making import make_kits
from tests.annotation.judge_spans import store_judge_answers
from tests.kits.campaign_helpers import lead_study
from tests.kits.test_blind_kits import _control_ids, _separates


def _answer(item_id: int, output: str) -> str:
    """The same kind of answer for every item: its output's first word as a span."""
    word = output.split()[0]
    severity = "major" if item_id % 2 else "minor"
    return f'[{{"text": "{word}", "severity": "{severity}"}}]\nScore: {item_id * 37 % 101}'


def _judge(study: Study, kinds: tuple[str, ...] | None) -> str:
    """Store the judge's answers on the items of `kinds` (None: all) not yet judged, as a
    new run (as `score` does); returns the run's label."""
    with study.session() as s:
        query = select(Item.id, Item.output, Item.kind)
        rows = [(i, o) for i, o, k in s.execute(query) if kinds is None or k in kinds]
        judge = select(Score.item_id).join(MetricRun, MetricRun.id == Score.run_id)
        judged = set(s.scalars(judge.where(MetricRun.metric == "llm_judge")))
    return store_judge_answers(study, {i: _answer(i, o) for i, o in rows if i not in judged})


def _esa_lead(path: Path) -> tuple[Study, str]:
    study = lead_study(path, seed=3, n_sources=20)
    set_protocol(study, "esa")
    label = _judge(study, ("regular",))  # before any queue: no control exists yet
    set_protocol(study, prefill=label)
    return study, label


def _kit_rows(kit: Path, sql: str) -> list[Any]:
    conn = sqlite3.connect(f"{kit.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_kits_whose_controls_the_judge_never_saw_are_refused_and_the_queues_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead.mbstudy"
    study, label = _esa_lead(lead)
    study.close()
    kits = tmp_path / "kits"
    assert main(["kit", str(lead), "--raters", "ana", "--out", str(kits)]) == 2
    err = capsys.readouterr().err
    assert "hidden control item" in err and "a rater would see which items are the controls" in err
    assert f"meaningbench score {lead} --metrics '{label}'" in err
    assert not (kits / "ana.mbkit").exists()
    study = open_study(lead)
    try:
        with study.session() as s:
            queued = list(s.scalars(select(QueueEntry.item_id).order_by(QueueEntry.position)))
            kinds = {int(i): str(k) for i, k in s.execute(select(Item.id, Item.kind))}
        assert {kinds[i] for i in queued} > {"regular", "control-identical"}  # kept
        _judge(study, None)  # the study scored again: only the controls had no score
    finally:
        study.close()
    assert main(["kit", str(lead), "--raters", "ana", "--out", str(kits)]) == 0
    study = open_study(lead)
    try:
        with study.session() as s:
            again = list(s.scalars(select(QueueEntry.item_id).order_by(QueueEntry.position)))
    finally:
        study.close()
    assert again == queued  # the kit holds the queue the refusal kept


def test_a_kit_tells_no_control_by_its_judge_spans(tmp_path: Path) -> None:
    lead = tmp_path / "lead.mbstudy"
    study, _label = _esa_lead(lead)
    try:
        # The queue made first (its controls with it), then the judge over what it lacks:
        # the controls' scores come in a later run than the regular items'.
        with pytest.raises(UserError, match="hidden control item"):
            make_kits(study, ["ana"], tmp_path / "kits")
        _judge(study, None)
        make_kits(study, ["ana"], tmp_path / "kits")
    finally:
        study.close()
    kit = tmp_path / "kits" / "ana.mbkit"
    controls, regular = _control_ids(kit, lead)
    assert len(controls) >= 3 and len(regular) >= 10
    assert _kit_rows(kit, "SELECT COUNT(*) FROM metric_run") == [(1,)]
    scores = _kit_rows(kit, "SELECT item_id, COUNT(*) FROM score GROUP BY item_id")
    assert {int(i) for i, _n in scores} == controls | regular and {n for _i, n in scores} == {1}
    columns = [r[1] for r in _kit_rows(kit, "PRAGMA table_info(score)")]
    found = []
    for column in columns:
        split: dict[bool, list[Any]] = defaultdict(list)
        for item_id, value in _kit_rows(kit, f'SELECT item_id, "{column}" FROM score'):
            split[int(item_id) in controls].append(value)
        why = _separates(split[True], split[False])
        if why is not None:
            found.append(f"score.{column}: {why}")
    assert found == []
    # On the kit's screen, every item comes with the judge's spans, the controls too.
    rated = open_study(kit)
    try:
        session = AnnotationSession(rated, "ana")
        shown: dict[int, int] = {}
        item = session.current()
        while item is not None and item.item_id not in shown:
            shown[item.item_id] = len(item.proposals)
            session.skip(item.item_id)
            item = session.current()
    finally:
        rated.close()
    assert set(shown) == controls | regular and min(shown.values()) >= 1


def test_a_kit_without_controls_is_made_with_the_spans_the_judge_gave(tmp_path: Path) -> None:
    """No control to tell: items the judge has not scored yet (added since) only go without
    spans, as before."""
    lead = tmp_path / "lead.mbstudy"
    study, _label = _esa_lead(lead)
    try:
        with study.session(write=True) as s:
            cfg = load_settings(s)
            cfg.qc_enabled = False
            save_settings(s, cfg)
            s.execute(delete(Score).where(Score.item_id % 3 == 0))
        [made] = make_kits(study, ["ana"], tmp_path / "kits")
    finally:
        study.close()
    judged = _kit_rows(made.path, "SELECT COUNT(*) FROM score")[0][0]
    assert 0 < judged < made.items
