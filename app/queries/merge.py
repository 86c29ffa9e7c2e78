"""What merging another copy of a study would bring in, read without changing the study.

The report is the one the merge itself gives (`meaningbench.annotation.merge`), so the
dialog's preview and the merge agree on what comes in and what conflicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from meaningbench.annotation.merge import MergeReport

__all__ = ["MergeReport", "preview_merge"]


def preview_merge(target_path: str | Path, other_path: str | Path) -> MergeReport:
    """The report merging `other_path` into `target_path` would give; nothing is written."""
    # The merge loads SQLAlchemy and both schemas: imported when a file is chosen.
    from meaningbench.annotation.merge_preview import preview_merge as preview

    return preview(target_path, other_path)
