"""A table the screens show, written as CSV or LaTeX where the user chose to save it.

The text is the engine's (`meaningbench.analysis.export`: full precision, cells a
spreadsheet would run neutralised, the correlation table's paper layout), so a table saved
from a screen is the table the command line writes.
"""

from __future__ import annotations

# The screens save through the engine's own writers, under the names they know them by.
from meaningbench.analysis.export import to_csv as table_csv
from meaningbench.analysis.export import to_latex as table_latex

__all__ = ["table_csv", "table_latex"]
