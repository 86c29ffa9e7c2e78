"""Hidden control items for a queue: generated once, stored as items, reused across annotators.

A control item is an ordinary `item` row of a control kind whose `parent_id` is the regular
item it was made from, so the screen shows it exactly like any other pair. The texts come
from `meaningbench.core.controls`, the same constructions the metric sanity checks use.

One control per (kind, variant, parent) is kept: when two annotators draw the same parent,
they rate the same control pair, which makes their control ratings comparable.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from meaningbench.core import controls
from meaningbench.core.keys import pair_key
from meaningbench.db.models import Item

# Variant (settings name) → item kind.
VARIANT_KIND = {
    "identical": "control-identical",
    "unrelated": "control-unrelated",
    "word_soup": "control-unrelated",
    "degraded": "control-degraded",
    "repeat": "control-repeat",
}
# How many other outputs are offered as donors / unrelated candidates per control: enough to
# find one under the overlap bar, few enough to keep queue building fast on large studies.
POOL_SAMPLE = 40


@dataclass(frozen=True)
class Parent:
    """The columns of a regular item that control generation needs."""

    id: int
    dataset_id: int
    source: str
    output: str
    system: str | None
    source_group: str
    pair_key: str


def control_pair_key(kind: str, variant: str, parent_key: str, source: str, output: str) -> str:
    # Distinct from any regular item's key (a repeat has its parent's very texts), and the same
    # in two copies of a study for the same control, which is how merging matches them.
    return pair_key(source, output, f"{kind}|{variant}|{parent_key}")


class ControlFactory:
    """Makes (or finds) control items for parents drawn from a pool of regular items."""

    def __init__(self, session: Session, pool: Sequence[Parent], rng: random.Random) -> None:
        self.session = session
        self.pool = list(pool)
        self.rng = rng
        self._vocabulary: list[str] | None = None
        self._existing: dict[tuple[str, str, int], Item] = {}
        rows = session.scalars(select(Item).where(Item.kind != "regular")).all()
        for row in rows:
            variant = str((row.meta or {}).get("control", row.kind.removeprefix("control-")))
            if row.parent_id is not None:
                self._existing.setdefault((row.kind, variant, row.parent_id), row)

    def vocabulary(self) -> list[str]:
        if self._vocabulary is None:
            texts = [p.source for p in self.pool] + [p.output for p in self.pool]
            self._vocabulary = controls.build_vocabulary(texts)
        return self._vocabulary

    def _others(self, parent: Parent) -> list[str]:
        """Outputs of a random sample of items with another source (donors, candidates)."""
        others: list[str] = []
        tries = 0
        while len(others) < POOL_SAMPLE and tries < POOL_SAMPLE * 3 and len(self.pool) > 1:
            tries += 1
            other = self.pool[self.rng.randrange(len(self.pool))]
            if other.source_group != parent.source_group and other.output.strip():
                others.append(other.output)
        return others

    def _texts(self, variant: str, parent: Parent) -> tuple[str, str, dict[str, Any]]:
        """(variant actually made, output text, details) for one control of `parent`."""
        if variant == "identical":
            return variant, controls.make_identical(parent.source), {}
        if variant == "repeat":
            return variant, parent.output, {}
        if variant == "degraded":
            text, details = controls.make_degraded(parent.output, self._others(parent), self.rng)
            return variant, text, details
        if variant == "unrelated":
            found = controls.sample_unrelated(parent.source, self._others(parent), self.rng)
            if found is not None:
                return variant, found, {}
            variant = "word_soup"  # no real sentence under the overlap bar: a soup instead
        soup = controls.make_word_soup(parent.source, self.vocabulary(), self.rng)
        return variant, soup, {}

    def make(self, variant: str, parent: Parent) -> Item | None:
        """The control item of `variant` for `parent`; None when its text cannot be made."""
        kind = VARIANT_KIND[variant]
        found = self._existing.get((kind, variant, parent.id))
        if found is not None:
            return found
        try:
            made, output, details = self._texts(variant, parent)
        except ValueError:
            return None  # an empty output, or a vocabulary with nothing outside the source
        if made != variant:
            found = self._existing.get((kind, made, parent.id))
            if found is not None:
                return found
        item = Item(
            dataset_id=parent.dataset_id,
            source=parent.source,
            output=output,
            references=[],
            # No system: controls must never enter system-level figures by accident.
            system=None,
            source_group=parent.source_group,
            pair_key=control_pair_key(kind, made, parent.pair_key, parent.source, output),
            kind=kind,
            parent_id=parent.id,
            meta={"control": made, "details": details, "parent_system": parent.system},
        )
        # Added without a flush: the caller flushes once for the whole batch (ids come then).
        self.session.add(item)
        self._existing[(kind, made, parent.id)] = item
        return item
