"""Text cells that a spreadsheet would run as formulas, made inert on export and restored
on import (resources/docs/input-rules.md, "Exported cells").

A CSV/TSV cell starting with = + - @, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (`=HYPERLINK(...)` in a source sentence becomes a link that
runs when clicked). Exports put a single quote before such text cells, as OWASP advises;
numbers are written as numbers and never changed. A quote is also added before text that
already starts with quotes followed by such a character, so that removing one quote gives
back exactly the text the study holds: that is what the importer does for files that
carry the marker column below, and only for those.
"""

from __future__ import annotations

import re
from typing import Literal

CellMode = Literal["spreadsheet-safe", "raw"]
CELL_MODES: tuple[CellMode, ...] = ("spreadsheet-safe", "raw")

# The last header cell of a spreadsheet-safe export; its rows are empty. Files without it
# (raw exports, any other program's files) are read as they are.
SAFE_CELLS_MARKER = "meaningbench: cells starting with = + - @ tab CR have a ' added"

FORMULA_START = "=+-@\t\r"
_NEEDS_QUOTE = re.compile(r"'*[=+\-@\t\r]")
_ADDED_QUOTE = re.compile(r"''*[=+\-@\t\r]")


_FIRST = frozenset("'" + FORMULA_START)


def neutralise(text: str) -> str:
    """The text as a spreadsheet-safe cell: a quote before text a spreadsheet would run."""
    if text and text[0] in _FIRST and _NEEDS_QUOTE.match(text):
        return "'" + text
    return text


def restore(cell: str) -> str:
    """The text a spreadsheet-safe cell stands for (the inverse of `neutralise`)."""
    if cell and cell[0] == "'" and _ADDED_QUOTE.match(cell):
        return cell[1:]
    return cell
