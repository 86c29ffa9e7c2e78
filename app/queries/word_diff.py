"""An inline word diff of an output against its source, as HTML for the comparison table.

One line per output: kept words plain, words the output added highlighted, words it
dropped struck through in place, so a reader sees what changed without reading twice.
Which words changed is the rating screen's rule (meaningbench.annotation.diff: words
compare case-insensitively and without edge punctuation, bounded on long texts); this
module only lays the result out.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from meaningbench.annotation.diff import Segment, tokens, word_diff, word_opcodes

# The rating screen's diff (segments of both texts) comes from the same rule.
__all__ = ["DiffOp", "Segment", "diff_counts", "diff_html", "inline_diff", "word_diff"]

ADDED_STYLE = "background-color:{add_bg}; color:{add_fg};"
DELETED_STYLE = "color:{del_fg}; text-decoration:line-through;"
LIGHT_COLOURS = {"add_bg": "#d7f0dc", "add_fg": "#0f5c22", "del_fg": "#b3261e"}
DARK_COLOURS = {"add_bg": "#1f4a2a", "add_fg": "#bdf0c8", "del_fg": "#ff8a80"}


@dataclass(frozen=True)
class DiffOp:
    op: str  # "equal" | "insert" | "delete"
    text: str


def inline_diff(source: str, output: str) -> list[DiffOp]:
    """The output's words in order, with the source's dropped words where they stood."""
    # Leading whitespace is no word of either text: the line starts at the first word.
    a, b = tokens(source.lstrip()), tokens(output.lstrip())
    ops: list[DiffOp] = []
    for tag, i1, i2, j1, j2 in word_opcodes(a, b):
        if tag == "equal":
            ops.append(DiffOp("equal", "".join(b[j1:j2])))
            continue
        if i2 > i1:
            ops.append(DiffOp("delete", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(DiffOp("insert", "".join(b[j1:j2])))
    return ops


def diff_counts(ops: list[DiffOp]) -> tuple[int, int, int]:
    """(kept, added, deleted) words."""
    counts = {"equal": 0, "insert": 0, "delete": 0}
    for op in ops:
        counts[op.op] += len(op.text.split())
    return counts["equal"], counts["insert"], counts["delete"]


def diff_html(ops: list[DiffOp], *, dark: bool = False) -> str:
    colours = DARK_COLOURS if dark else LIGHT_COLOURS
    added = ADDED_STYLE.format(**colours)
    deleted = DELETED_STYLE.format(**colours)
    parts = []
    for k, op in enumerate(ops):
        body = html.escape(op.text.rstrip())
        # A dropped word after the output's last word still needs a space before it.
        trail = " " if op.text != op.text.rstrip() or k + 1 < len(ops) else ""
        if op.op == "insert":
            parts.append(f'<span style="{added}">{body}</span>{trail}')
        elif op.op == "delete":
            parts.append(f'<span style="{deleted}">{body}</span>{trail}')
        else:
            parts.append(body + trail)
    return "".join(parts).strip()
