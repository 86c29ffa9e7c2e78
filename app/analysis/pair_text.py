"""The text a label and a raw rating are matched on (`meaningbench audit`, the CSMD recipe).

Unicode NFC, every run of whitespace (tabs, newlines, non-breaking spaces) made one space,
leading and trailing space removed. Case and punctuation are kept: they can change meaning,
and a label copied from a file keeps them anyway.
"""

from __future__ import annotations

import re
import unicodedata

NORMALISATION = (
    "Unicode NFC; every run of whitespace made one space; leading and trailing spaces "
    "removed; case and punctuation kept"
)
_SPACE = re.compile(r"\s+")


def normalise(text: object) -> str:
    """The text a pair is matched on."""
    return _SPACE.sub(" ", unicodedata.normalize("NFC", str(text))).strip()
