"""The checksum each result row carries: a digest of its values, written by `shards score`
and checked by `shards merge`, so a value changed on its way between machines (a bad copy,
a hand edit, a tool that rounds floats) is refused instead of merged.

One per row rather than one per file: Ray Data decides how rows are split into files, and a
row can be checked wherever it ends up. Rows that went missing altogether are what the
manifest's expected counts catch (meaningbench.cluster.merge).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

# Columns the checksum covers, in this order (every result column but itself).
COVERED = ("item_id", "metric", "config_hash", "input_hash", "value", "raw", "details", "error", "study_id")  # fmt: skip


def _exact(x: Any) -> Any:
    # float.hex: every bit of the value (a rounded copy does not pass), NaN and inf included.
    return x.hex() if isinstance(x, float) else x


def row_checksum(values: dict[str, Any]) -> str:
    """The digest of one result row's values, by column name."""
    text = json.dumps([_exact(values[c]) for c in COVERED], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
