"""The practice a kit was made with, kept by the lead's study and checked when it comes back.

A kit judges its rater's practice offline, against the practice items and the pass mark it
carries: a range widened, a pass mark lowered or more attempts allowed with plain sqlite3
would let a rater pass there and rate. So the lead's record of each kit keeps what the kit
was made with (`KitRecord.practice`): each practice item by a digest of its texts (source
and output, the identity `practice_return` matches answers by), a short label and its
expected range, and the pass mark's four settings. Collect reads the same from the
returned kit and refuses it, saying what differs, when they are not the same. It compares
with the kit as made, never with the lead's study now: the lead may edit the practice or
the pass mark after making kits.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from meaningbench.annotation.settings import SETTINGS_KEY, AnnotationSettings

# Runs one SQL statement on a kit file and returns its rows (sqlite3 or SQLAlchemy).
Rows = Callable[[str], Iterable[Sequence[Any]]]

PASS_MARK_FIELDS = {
    "practice_pass_items": "items to pass",
    "practice_within": "points from the range",
    "practice_attempts": "attempts",
    "practice_after_failed": "after the last failed attempt",
}
_ITEMS = "SELECT source, output, low, high FROM practice_item ORDER BY id"
_SETTINGS = f"SELECT value FROM study_setting WHERE key = '{SETTINGS_KEY}'"


def practice_in(rows: Rows) -> dict[str, Any]:
    """The kit's practice items and pass mark, as `KitRecord.practice` keeps them."""
    items = sorted(
        [_digest(source, output), _label(output), low, high]
        for source, output, low, high in rows(_ITEMS)
    )
    found = list(rows(_SETTINGS))
    raw = found[0][0] if found else None
    settings = json.loads(raw) if isinstance(raw, str | bytes) else raw
    settings = settings if isinstance(settings, dict) else {}
    blank = AnnotationSettings().to_json()
    mark = {name: settings.get(name, blank[name]) for name in PASS_MARK_FIELDS}
    # Through JSON as the record is stored, so a kit as made compares equal to its record.
    out: dict[str, Any] = json.loads(json.dumps({"items": items, "pass_mark": mark}))
    return out


def practice_differs(made: dict[str, Any], kit: dict[str, Any]) -> str | None:
    """What differs between the practice a kit was made with and the practice it holds
    now, in words; None when nothing does."""
    problems = _items_differ(made.get("items", []), kit["items"])
    was, now = made.get("pass_mark", {}), kit["pass_mark"]
    for name, what in PASS_MARK_FIELDS.items():
        if not _same(was.get(name), now.get(name)):
            problems.append(
                f"practice pass mark, {what}: {_shown(was.get(name))} when the kit was made, "
                f"{_shown(now.get(name))} in the kit"
            )
    return "; ".join(problems) or None


def _items_differ(made: list[list[Any]], kit: list[list[Any]]) -> list[str]:
    was = {str(row[0]): row for row in made}
    now = {str(row[0]): row for row in kit}
    problems = []
    for digest, (_d, label, low, high) in now.items():
        before = was.get(digest)
        if before is None:
            problems.append(f"practice item {label}: not one the kit was made with")
        elif not (_same(before[2], low) and _same(before[3], high)):
            problems.append(
                f"practice item {label}: expected range {_range(before[2], before[3])} "
                f"when the kit was made, {_range(low, high)} in the kit"
            )
    problems += [
        f"practice item {row[1]}: no longer in the kit" for d, row in was.items() if d not in now
    ]
    if not problems and made != kit:  # the same texts, one of them twice on one side
        problems.append(f"practice items: {len(made)} when the kit was made, {len(kit)} in the kit")
    return problems


def _digest(source: Any, output: Any) -> str:
    return hashlib.sha256(f"{source}\x1f{output}".encode()).hexdigest()


def _label(words: Any) -> str:
    shown = " ".join(str(words).split())
    return repr(shown if len(shown) <= 40 else shown[:39] + "…")


def _same(a: Any, b: Any) -> bool:
    """Equal values, a flag never equal to a number (JSON's true is not 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, float):
        return format(value, "g")
    return value if isinstance(value, str) else repr(value)


def _range(low: Any, high: Any) -> str:
    return f"{_shown(low)}–{_shown(high)}"
