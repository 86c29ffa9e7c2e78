"""Engine messages in the words of the import dialog instead of the command line's.

The importer's errors are written for `meaningbench import` and name its flags
(`--ratings anonymous`, `--map`); in a dialog the user has a combo box, not a flag, so the
message says which control to change. Only the wording changes: the facts are the engine's.
"""

from __future__ import annotations

import re

# (pattern, replacement), applied in order: the longer flags first.
_TERMS: tuple[tuple[str, str], ...] = (
    (r"--ratings anonymous", "“Ratings: Per rater, anonymous” above"),
    (r"--ratings aggregate", "“Ratings: Aggregate”"),
    (r"--ratings per-rater", "“Ratings: Per rater, named”"),
    (r"--ratings", "the Ratings choice above"),
    (r"--map dimension\.\w+=\S+", "the column choices under “Columns”"),
    (r"--map '[^']*'", "the column choices under “Columns”"),
    (r"--map", "the column choices under “Columns”"),
    (r"--dataset", "the Dataset field"),
    (r"--system", "the System field"),
    (r"--format \w+", "the Format choice"),
    (r"--format", "the Format choice"),
    (r"--encoding \S+", "the file's encoding"),
    (r"--encoding", "the file's encoding"),
)


def in_dialog_terms(message: str) -> str:
    """`message` with every command-line flag replaced by the control that does the same."""
    for pattern, words in _TERMS:
        message = re.sub(pattern, words, message)
    return message
