"""Result tables as CSV and LaTeX (the CLI, the HTML report and the dashboard share these).

Every result object has `to_frame()`; a correlation table also has a compact LaTeX layout
with the interval beside each coefficient, as papers print it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from meaningbench.core.atomic_file import write_text_atomically
from meaningbench.core.cells import neutralise


class HasFrame(Protocol):
    def to_frame(self) -> pd.DataFrame: ...


def as_frame(table: HasFrame | pd.DataFrame) -> pd.DataFrame:
    return table if isinstance(table, pd.DataFrame) else table.to_frame()


def _safe_label(label: Any) -> Any:
    return neutralise(label) if isinstance(label, str) else label


def to_csv(table: HasFrame | pd.DataFrame, path: str | Path | None = None) -> str:
    """CSV text of a result table (full precision, empty cells for missing values).

    Text a spreadsheet would run as a formula (a system or rater named `=cmd`) gets a
    leading quote, as in study exports (`meaningbench.core.cells`); numbers never do.
    """
    frame = as_frame(table).rename(index=_safe_label, columns=_safe_label)
    frame.index.names = [_safe_label(n) for n in frame.index.names]
    frame.columns.names = [_safe_label(n) for n in frame.columns.names]
    for i in range(frame.shape[1]):
        column = frame.iloc[:, i]
        if not pd.api.types.is_numeric_dtype(column):
            frame.isetitem(i, column.map(_safe_label))
    text: str = frame.to_csv(lineterminator="\n")
    if path is not None:
        write_text_atomically(Path(path), text)
    return text


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_SYMBOLS = {"≥": r"$\geq$", "≤": r"$\leq$", "²": r"$^2$", "×": r"$\times$"}


def latex_escape(text: str) -> str:
    out = "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)
    for symbol, macro in _LATEX_SYMBOLS.items():
        out = out.replace(symbol, macro)
    return out


def _cell(value: Any, digits: int) -> str:
    if value is None:
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (hasattr(value, "dtype") and "int" in str(value.dtype)):
        return str(int(value))
    if isinstance(value, float) or hasattr(value, "dtype"):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            return "--"
        if v.is_integer() and abs(v) >= 10**digits:
            return str(int(v))
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.1e}"
        return f"{v:.{digits}f}"
    return latex_escape(str(value))


def to_latex(
    table: HasFrame | pd.DataFrame,
    path: str | Path | None = None,
    *,
    caption: str | None = None,
    label: str | None = None,
    digits: int = 3,
) -> str:
    """A booktabs `table` environment (needs \\usepackage{booktabs})."""
    latex_frame = getattr(table, "latex_frame", None)
    frame = latex_frame() if callable(latex_frame) else as_frame(table)
    index_name = frame.index.name or ""
    header = [latex_escape(str(index_name)), *(latex_escape(str(c)) for c in frame.columns)]
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(frame.columns) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    # itertuples keeps each column's type: iterrows would print a count beside a float as 45.000.
    for index, *values in frame.itertuples(index=True, name=None):
        cells = [latex_escape(str(index)), *(_cell(v, digits) for v in values)]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    if label:
        lines.append(r"\label{" + label + "}")
    lines.append(r"\end{table}")
    text = "\n".join(lines) + "\n"
    if path is not None:
        write_text_atomically(Path(path), text)
    return text


def interval_text(value: float, low: float, high: float, digits: int = 3) -> str:
    """`0.512 [0.470, 0.551]`, or the value alone without an interval."""
    if not math.isfinite(value):
        return "--"
    if math.isfinite(low) and math.isfinite(high):
        return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
    return f"{value:.{digits}f}"


def to_text(table: HasFrame | pd.DataFrame, digits: int = 3) -> str:
    """A plain-text table for terminals."""
    frame = as_frame(table)
    text: str = frame.to_string(float_format=lambda v: f"{v:.{digits}f}", na_rep="-")
    return text
