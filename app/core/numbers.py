"""The one rule for a number written as text: a rating cell, a command-line option, a
threshold (resources/docs/input-rules.md).

ASCII digits, an optional sign, one decimal point and an optional exponent, and finite.
Python's float() also takes "nan", "inf", "5_0", "５０" and surrounding Unicode spaces;
none of those is a number a person meant, and NaN or infinity stored in a setting makes
it invalid JSON.
"""

from __future__ import annotations

import math
import re

PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
PLAIN_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
NON_FINITE = frozenset({"nan", "inf", "infinity"})
_SEPARATED_DIGITS = re.compile(r"[0-9][ ,.'\u00a0\u202f][0-9]")


class NumberProblem(ValueError):
    """Text that is not a plain finite number; the message says why, quoting the text."""


def is_non_finite(text: str) -> bool:
    return text.strip().lstrip("+-").lower() in NON_FINITE


def why_not_plain(text: str) -> str:
    """Why `text` (stripped) is not a plain number, for a message."""
    if "_" in text:
        return "digit separators ('_') are not accepted"
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        return "write it with the digits 0-9; it has other digits, e.g. full-width ones"
    if _SEPARATED_DIGITS.search(text):
        return "thousands separators are not accepted; one decimal point or comma at most"
    return "expected digits with an optional sign and one decimal point"


def plain_number(text: str) -> float:
    """`text` as a finite float by the rule above; NumberProblem otherwise."""
    stripped = text.strip(" \t\r\n")
    if is_non_finite(stripped):
        raise NumberProblem(f"{text!r} is not a finite number")
    if not PLAIN_NUMBER.fullmatch(stripped):
        raise NumberProblem(f"{text!r} is not a number ({why_not_plain(stripped)})")
    number = float(stripped)
    if not math.isfinite(number):  # "1e999"
        raise NumberProblem(f"{text!r} is not a finite number")
    return number


def plain_whole_number(text: str) -> int:
    """`text` as an int: ASCII digits with an optional sign; NumberProblem otherwise."""
    stripped = text.strip(" \t\r\n")
    if PLAIN_WHOLE_NUMBER.fullmatch(stripped):
        return int(stripped)
    if PLAIN_NUMBER.fullmatch(stripped):
        raise NumberProblem(f"{text!r} is not a whole number")
    plain_number(text)  # raises, with the reason
    raise NumberProblem(f"{text!r} is not a whole number")  # pragma: no cover
