"""Values made safe for JSON: the statistics and cards this program writes."""

from __future__ import annotations

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
