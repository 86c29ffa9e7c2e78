"""A table the screens show, written as CSV or LaTeX where the user chose to save it.

The text is the engine's (`meaningbench.analysis.export`: full precision, cells a
spreadsheet would run neutralised, the correlation table's paper layout), so a table saved
from a screen is the table the command line writes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from meaningbench.analysis.export import HasFrame, to_csv, to_latex

__all__ = ["table_csv", "table_latex"]


def table_csv(table: HasFrame | pd.DataFrame, path: str | Path | None = None) -> str:
    """The table's CSV text, also written to `path` when given."""
    return to_csv(table, path)


def table_latex(
    table: HasFrame | pd.DataFrame,
    path: str | Path | None = None,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = 3,
) -> str:
    """The table's LaTeX text, also written to `path` when given."""
    return to_latex(table, path, caption=caption, label=label, digits=digits)
