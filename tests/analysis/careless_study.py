"""A study rated through the annotation engine by three raters, one of whom turns careless
halfway through their queue: for the rater checks over time, their view and its screenshots."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from meaningbench.annotation.practice import PracticeSession, add_practice
from meaningbench.annotation.session import AnnotationSession
from meaningbench.annotation.settings import QCMix, load_settings, save_settings
from meaningbench.db.models import Item
from meaningbench.db.study import Study, create_study
from tests.annotation.factories import add_items

START = datetime(2026, 3, 2, 9, 0)
PRACTICE = [("A first source.", "A first output.", 60.0, 100.0, "")] * 2


def _careful(item: Item, rng: random.Random) -> float:
    if item.kind == "control-identical":
        return 100.0
    if item.kind == "control-unrelated":
        return 0.0
    base = (item.parent_id or item.id) * 37 % 101
    return float(min(100, max(0, base + rng.randint(-4, 4))))


# Each careful rater's own pace: seconds an item is on screen, give or take 3.
PACE = {"ann": 10, "bo": 15, "cy": 12}


def _rate(study: Study, name: str, careless_from: int | None) -> None:
    """Rate the rater's whole queue, one item every 20 s of their clock, at their pace;
    from item `careless_from` on, guessing at 1 s per item."""
    rng = random.Random(name)
    session = AnnotationSession(study, name)
    n = 0
    while (shown := session.next_item()) is not None:
        with study.session() as s:
            item = s.get(Item, shown.item_id)
            assert item is not None
            careless = careless_from is not None and n >= careless_from
            value = float(rng.randint(20, 80)) if careless else _careful(item, rng)
        at = START + timedelta(seconds=20 * n)
        spent = timedelta(seconds=1 if careless else PACE[name] + rng.randint(-3, 3))
        session.submit(shown.item_id, {"meaning": value}, shown_at=at - spent, submitted_at=at)
        n += 1


def careless_study(path: Path) -> Path:
    """ann and bo careful all along, cy careful for 40 items then guessing at 1 s an item;
    cy answered two practice items, one within range."""
    study = create_study(path)
    try:
        add_items(study, 30, 2)
        with study.session() as s:
            cfg = load_settings(s)
            cfg.seed, cfg.qc_enabled = 3, True
            cfg.qc = QCMix(degraded=0, identical=10, repeat=0, unrelated=10, word_soup=0)
            save_settings(s, cfg)
        add_practice(study, PRACTICE)
        practice = PracticeSession(study, "cy")
        for p, value in zip(practice.pending(), (80.0, 10.0), strict=True):
            practice.answer(p, value)
        _rate(study, "ann", None)
        _rate(study, "bo", None)
        _rate(study, "cy", 40)
    finally:
        study.close()
    return path
