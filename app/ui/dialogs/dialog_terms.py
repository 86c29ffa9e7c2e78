"""Engine messages in the words of a dialog instead of the command line's.

The engine's errors are written for the commands and name their flags (`--ratings
anonymous`, `--map`, `--raters`); in a dialog the user has a field or a combo box, not a
flag, so the message says which control to change. Only the wording changes: the facts are
the engine's. Each dialog has its table (the import dialog's is the default).
"""

from __future__ import annotations

import re

# (pattern, replacement), applied in order: the longer flags first.
_TERMS: tuple[tuple[str, str], ...] = (
    (r"import with --same-raters", "choose “Raters already in the study: Are the same people”"),
    (r"with --rater-prefix \(--rater-prefix \S+ makes", "with “Are other people” (it makes"),
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


# The kit dialogs (Make rater kits, the Campaign page's top-up): a field of rater names and
# a folder.
KIT_TERMS: tuple[tuple[str, str], ...] = (
    (r"--raters ('[^']*'|\S+)", r"Raters \1"),
    (r"--raters", "the Raters field"),
    (r"--top-up", "the top-up"),
    (r"--out folder", "folder"),
    (r"--out", "the folder"),
)
# The training dialog: its output folder.
TRAINING_TERMS: tuple[tuple[str, str], ...] = (
    (r"--out folder", "output folder"),
    (r"--out", "the output folder"),
)


def in_dialog_terms(message: str, terms: tuple[tuple[str, str], ...] = _TERMS) -> str:
    """`message` with every command-line flag replaced by the control that does the same."""
    for pattern, words in terms:
        message = re.sub(pattern, words, message)
    return message
