"""Keys that group rows into items and items into source groups.

An item is identified within a dataset by (source, output, system); items that share a
source sentence (after whitespace normalisation) share a source group, which splits,
bootstrap resampling, queue ordering and SAMSA scenes all rely on.
"""

from __future__ import annotations

import hashlib


def normalise_text(text: str) -> str:
    # str.split() and re's \s agree on what whitespace is; split/join is three times faster,
    # which matters when a million rows are keyed.
    return " ".join(text.split())


def _digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def source_group_key(source: str) -> str:
    return _digest(normalise_text(source))


def pair_key(source: str, output: str, system: str | None) -> str:
    return _digest(normalise_text(source), normalise_text(output), system or "")


def item_keys(source: str, output: str, system: str | None) -> tuple[str, str]:
    """(source_group, pair_key) together, normalising the source once."""
    src = normalise_text(source)
    return _digest(src), _digest(src, normalise_text(output), system or "")
