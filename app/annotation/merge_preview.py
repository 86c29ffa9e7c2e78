"""What a merge would do, before it is done: the same merge, run on a scratch copy.

`merge_ratings` decides per rating whether it is new, a duplicate or a conflict; rather than
a second, drifting copy of those rules, the preview runs it on a temporary copy of the
target study and reports what that copy received. The study itself is not touched.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from meaningbench.annotation.merge import MergeReport, merge_ratings
from meaningbench.db.study import copy_study, open_study
from meaningbench.errors import UserError


def preview_merge(target_path: str | Path, other_path: str | Path) -> MergeReport:
    """The report `merge_ratings(target, other)` would give, without changing the target."""
    target_path, other_path = Path(target_path), Path(other_path)
    if other_path.exists() and target_path.exists() and other_path.samefile(target_path):
        # Said here, before the copy makes them two files.
        raise UserError("A study cannot be merged into itself.")
    with tempfile.TemporaryDirectory(prefix="mb-merge-") as tmp:
        scratch = copy_study(target_path, Path(tmp) / target_path.name)
        study = open_study(scratch)
        try:
            report = merge_ratings(study, other_path, chunk_gap_s=0)
        finally:
            study.close()
    report.other = other_path
    return report
