"""Text placed into Markdown as text: names and titles that must not become markup."""

from __future__ import annotations

import re

# CommonMark lets a backslash escape any ASCII punctuation, and GitHub tables read `\|`
# as a literal bar: escaping all of it is always right, whatever the context.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u0085\u2028\u2029]+")


def markdown_text(text: str) -> str:
    """`text` as Markdown showing exactly it, on one line (a name may hold *, |, # or <)."""
    return _PUNCTUATION.sub(r"\\\1", _LINE_BREAKS.sub(" ", text))
