"""What the export dialog says about a finished export: how its text cells were written.

The words are the command line's (`meaningbench.datasets.exporters.cells_note`), so the
dialog and `meaningbench export` describe the same file the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meaningbench.datasets.exporters import ExportReport

__all__ = ["ExportReport", "cells_note"]


def cells_note(report: ExportReport) -> str:
    """One line on the text cells: as they are, or spreadsheet-safe and how many changed."""
    from meaningbench.datasets.exporters import cells_note as note

    return note(report)
