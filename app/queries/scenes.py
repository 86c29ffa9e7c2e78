"""What the scene editor asks: a source's words, a parser's proposal, SAMSA's preview.

Scenes are SAMSA's own dataclasses (`meaningbench.metrics.structural.scenes`); reading
a source's scenes is `meaningbench.queries.compare.source_scenes`, storing them
`meaningbench.ops.scenes.save_scenes`. spaCy loads only when a proposal is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from meaningbench.metrics.structural.scenes import Participant, SceneSpec
from meaningbench.metrics.structural.tokens import is_punct, words

__all__ = [
    "ParserStatus",
    "Participant",
    "SceneSpec",
    "is_punct",
    "parser_status",
    "preview_details",
    "propose_scenes",
    "source_words",
]


class ParserStatus(NamedTuple):
    available: bool
    model: str
    message: str


def source_words(text: str) -> list[str]:
    """The words of `text` as SAMSA tokenises it (scene participants are these words)."""
    return words(text)


def parser_status() -> ParserStatus:
    """Whether spaCy and an English pipeline are there to propose scenes, and which."""
    from meaningbench.metrics.structural.propose import parser_status as status

    return ParserStatus(*status())


def propose_scenes(texts: Sequence[str]) -> list[list[SceneSpec]]:
    """Each text's scenes as the parser proposes them (see `parser_status` first)."""
    from meaningbench.metrics.structural.propose import propose_scenes as propose

    return propose(texts)


def preview_details(scenes: Sequence[SceneSpec], output: str) -> dict[str, Any]:
    """SAMSA's details for scenes not stored yet: exact and lemma alignment, no encoder."""
    from meaningbench.metrics.structural.samsa import preview_details as details

    return details(scenes, output)
