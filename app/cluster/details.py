"""How much of each score's details a result shard keeps: at 50 million scores, per-item
details (alignments, token lists) make most of a study file.

- `full`: the details as the metric gives them;
- `compact`: only the top-level numbers, booleans and short strings (BERTScore's P and R,
  SARI's add/keep/delete), none of the lists or nested objects;
- `none`: no details.

Every mode keeps the note of a score deliberately not computed (and why): without it such
a score would read as a failure.
"""

from __future__ import annotations

import json
from typing import Any

from meaningbench.metrics.base import NOT_COMPUTED

DETAILS_MODES = ("full", "compact", "none")
SHORT_TEXT = 64


def _compact_value(value: Any) -> bool:
    if isinstance(value, bool | int | float) or value is None:
        return True
    return isinstance(value, str) and len(value) <= SHORT_TEXT


def kept_details(details: dict[str, Any] | None, mode: str) -> dict[str, Any]:
    if not details:
        return {}
    if mode == "full":
        return details
    if mode == "compact":
        return {k: v for k, v in details.items() if k == NOT_COMPUTED or _compact_value(v)}
    return {NOT_COMPUTED: details[NOT_COMPUTED]} if NOT_COMPUTED in details else {}


def details_json(details: dict[str, Any] | None, mode: str) -> str | None:
    kept = kept_details(details, mode)
    return json.dumps(kept, ensure_ascii=False, default=str) if kept else None
