"""Text cells that a spreadsheet would run as formulas, made inert on export and restored
on import (resources/docs/input-rules.md, "Exported cells").

A CSV/TSV cell starting with = + - @, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (`=HYPERLINK(...)` in a source sentence becomes a link that
runs when clicked). Exports put a single quote before such text cells, as OWASP advises;
numbers are written as numbers and never changed. A quote is also added before text that
already starts with quotes followed by such a character, so that removing one quote gives
back exactly the text the study holds: that is what the importer does for files with a
notice beside them (below), and only for those.

The table itself stays clean (no extra column or line for pandas, R or a spreadsheet to
trip over): when an export changed cells it writes a notice file `<file>.notice.txt`
beside it, saying so; the importer removes the added quotes from a file whose notice lies
beside it. Exports of earlier versions said it in a last header cell (`SAFE_CELLS_MARKER`),
which the importer still reads.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

CellMode = Literal["spreadsheet-safe", "raw"]
CELL_MODES: tuple[CellMode, ...] = ("spreadsheet-safe", "raw")

# The last header cell of spreadsheet-safe exports of earlier versions; its rows are empty.
SAFE_CELLS_MARKER = "meaningbench: cells starting with = + - @ tab CR have a ' added"
NOTICE_SUFFIX = ".notice.txt"
# The notice file's first line; the importer trusts only a notice that starts with it.
NOTICE_FIRST_LINE = "meaningbench spreadsheet-safe cells"

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


def notice_path(table: Path) -> Path:
    """The notice file beside an export whose cells got a leading quote."""
    return table.with_name(table.name + NOTICE_SUFFIX)


def notice_text(table: Path, quoted: int) -> str:
    return (
        f"{NOTICE_FIRST_LINE}\n"
        f"In {table.name}, {quoted:,} text cells starting with = + - @, a tab or a carriage "
        "return have a ' added in front, so that a spreadsheet shows them as text instead of "
        "running them as formulas. Numbers were not changed.\n"
        f"`meaningbench import` removes the added ' again while this file lies beside "
        f"{table.name}; without it the cells are read as they are.\n"
    )


def has_notice(table: Path) -> bool:
    """Whether `table` is a spreadsheet-safe export whose added quotes are to be removed."""
    try:
        with notice_path(table).open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\r\n") == NOTICE_FIRST_LINE
    except (OSError, UnicodeDecodeError):
        return False
