"""Scenes as values: what SAMSA scores, what the editor edits, what importers produce.

A scene (UCCA's unit of an event or state) is its main relation (a Process or a State)
and its participants. Each participant has a *minimal centre*, the word(s) that carry it
(UCCA: follow Centre edges down until a unit has none), and SAMSA asks only whether that
centre survived. Indices refer to `tokens`, the source's tokenisation the scene was drawn
on, so a scene stays valid whatever tokenizer later changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

SceneOrigin = Literal["manual", "ucca", "parser"]
SCENE_ORIGINS: tuple[str, ...] = get_args(SceneOrigin)


@dataclass(frozen=True)
class Participant:
    tokens: tuple[int, ...]
    centre: tuple[int, ...] = ()
    remote: bool = False  # UCCA remote edge: the participant is written in another scene

    def minimal_centre(self) -> tuple[int, ...]:
        """The words that must survive; a participant drawn without a centre is its words."""
        return self.centre or self.tokens

    @property
    def implicit(self) -> bool:
        """An implicit UCCA unit has no words: SAMSA scores it ½ (neither found nor lost)."""
        return not self.tokens and not self.centre

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tokens": list(self.tokens), "centre": list(self.centre)}
        if self.remote:
            out["remote"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Participant:
        return cls(
            tokens=tuple(int(i) for i in data.get("tokens", ())),
            centre=tuple(int(i) for i in data.get("centre", ())),
            remote=bool(data.get("remote", False)),
        )


@dataclass(frozen=True)
class SceneSpec:
    tokens: tuple[str, ...]
    main_relation: tuple[int, ...]
    participants: tuple[Participant, ...] = ()
    origin: str = "manual"
    position: int = 0
    id: int | None = field(default=None, compare=False)

    def span(self) -> tuple[int, ...]:
        """The scene's words: those a matching output sentence should align with."""
        idx = set(self.main_relation)
        for p in self.participants:
            idx.update(p.tokens)
            idx.update(p.centre)
        return tuple(sorted(idx))

    def text(self, indices: Iterable[int] | None = None) -> str:
        chosen = self.span() if indices is None else tuple(indices)
        return " ".join(self.tokens[i] for i in sorted(chosen) if 0 <= i < len(self.tokens))

    def validate(self) -> None:
        """Raise ValueError when an index is outside the tokens or a centre leaves its unit."""
        n = len(self.tokens)
        if not self.main_relation:
            raise ValueError("a scene needs a main relation (a Process or a State)")
        for i in self.main_relation:
            if not 0 <= i < n:
                raise ValueError(f"main relation token {i} is outside the sentence ({n} tokens)")
        for k, p in enumerate(self.participants, 1):
            for i in (*p.tokens, *p.centre):
                if not 0 <= i < n:
                    raise ValueError(f"participant {k}: token {i} is outside the sentence")
            if p.tokens and not set(p.centre) <= set(p.tokens):
                raise ValueError(f"participant {k}: its centre must be among its words")

    def with_position(self, position: int) -> SceneSpec:
        return replace(self, position=position)


def scene_from_row(row: Any) -> SceneSpec:
    """A SceneSpec from a `meaningbench.db.models.Scene` row (or anything with the same attributes)."""
    return SceneSpec(
        tokens=tuple(str(t) for t in row.tokens or ()),
        main_relation=tuple(int(i) for i in row.main_relation or ()),
        participants=tuple(Participant.from_json(p) for p in row.participants or ()),
        origin=str(row.origin or "manual"),
        position=int(row.position or 0),
        id=row.id,
    )


# Which scenes to read: those of one origin, or the best one a source has.
SceneChoice = Literal["best", SceneOrigin]
ORIGIN_CHOICES: tuple[str, ...] = get_args(SceneChoice)
ORIGIN_PREFERENCE = ("manual", "ucca", "parser")


def pick_origin(by_origin: dict[str, list[SceneSpec]], origin: str = "best") -> list[SceneSpec]:
    if origin != "best":
        return by_origin.get(origin, [])
    for name in ORIGIN_PREFERENCE:
        if by_origin.get(name):
            return by_origin[name]
    return []


def scenes_fingerprint(scenes: Sequence[SceneSpec]) -> str:
    """A short hash of the scenes an output was scored against (changes when they are edited)."""
    payload = [
        [list(s.tokens), list(s.main_relation), [p.to_json() for p in s.participants], s.origin]
        for s in scenes
    ]
    data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return hashlib.blake2b(data, digest_size=8).hexdigest()
