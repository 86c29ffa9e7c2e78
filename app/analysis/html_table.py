"""Tables of the HTML report (`meaningbench.analysis.report`) and of its sections.

Apart from the report so that a section's module (the audit, the metric choice, the
selection replay) imports it without importing the report that gathers the sections.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np
import pandas as pd


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if not math.isfinite(f):
            return "–"
        if f != 0 and abs(f) < 10 ** (-digits):
            return f"{f:.1e}"
        return f"{f:.{digits}f}"
    return escape(str(v))


def html_table(
    frame: pd.DataFrame, *, digits: int = 3, classes: dict[str, str] | None = None
) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in [frame.index.name or "", *frame.columns])
    rows = []
    # Row by row across the columns: iterrows would make one dtype of a row, so a count
    # beside a float would print as 45.000.
    for index, *values in frame.itertuples(index=True, name=None):
        cls = f" class='{classes[str(index)]}'" if classes and str(index) in classes else ""
        cells = "".join(f"<td>{_fmt(v, digits)}</td>" for v in values)
        rows.append(f"<tr{cls}><td>{escape(str(index))}</td>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
