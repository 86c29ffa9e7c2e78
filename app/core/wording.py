"""Words built from numbers, the same on the command line and on the screens."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """'1 kit', '1,204 kits': the count with its noun, plural by an s."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
