"""Values made safe for JSON: the statistics and cards this program writes."""

from __future__ import annotations

import json
import math
from typing import Any


def clean_json(obj: Any) -> Any:
    """`obj` with NaN and infinities as None, numpy scalars as Python numbers, keys as str.

    JSON has no NaN: a statistic that could not be computed is written as null.
    """
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_json(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return clean_json(obj.item())
    return obj


# Line breaks to str.splitlines() and to JavaScript, though JSON lets a string hold them raw.
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def json_line(obj: Any) -> str:
    """One JSON Lines line (with its \\n): UTF-8 text as it is, except the characters other
    readers split lines on, which are escaped so that any reader sees one line."""
    # The characters can only occur inside JSON strings, where the escape means the same.
    return json.dumps(obj, ensure_ascii=False).translate(_LINE_BREAKS) + "\n"
