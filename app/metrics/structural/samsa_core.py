"""SAMSA (Sulem, Abend and Rappoport 2018) for one output, given the source's scenes.

    scene score  = ½·[main relation aligned] + ½·mean over participants [minimal centre aligned]
    SAMSA        = (n_out / n_in²)·Σ scene scores,   0 when n_out > n_in
    SAMSA_abl    = (1 / n_in)·Σ scene scores          (no non-splitting penalty)

Conventions taken from the public implementation (EASSE's samsa.py), which the paper's
formula leaves open: a scene goes to the output sentence with the most word alignments to
it (first one on a tie); when there are as many sentences as scenes, each sentence takes
at most one scene (greedy, in scene order), with fewer sentences several scenes may share
one; a part counts as aligned when every word of its minimal centre aligns within the
matched sentence; a part with no words (an implicit unit) and a scene without
participants score ½ for that part. A participant drawn without a centre (by hand) is
centred on its content words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from meaningbench.metrics.structural.alignment import WordAligner, WordLink
from meaningbench.metrics.structural.scenes import SceneSpec
from meaningbench.metrics.structural.sentences import split_sentences
from meaningbench.metrics.structural.tokens import is_content, words

EMPTY_PART_SCORE = 0.5


@dataclass
class PartResult:
    role: str  # "main relation" | "participant"
    text: str  # the unit's words
    centre: str  # the words that had to survive
    found: bool | None  # None: the unit has no words (implicit)
    score: float
    matches: list[str] = field(default_factory=list)  # "word→word (via)" for each centre word
    remote: bool = False  # a UCCA remote participant: written in another scene


@dataclass
class SceneResult:
    position: int
    text: str
    sentence: int | None  # index of the matched output sentence; None when nothing aligned
    n_alignments: int
    main_relation: PartResult
    participants: list[PartResult]
    score: float


@dataclass
class SamsaResult:
    n_scenes: int
    n_sentences: int
    sentences: list[str]
    scenes: list[SceneResult]
    samsa: float  # 0..1
    samsa_abl: float  # 0..1
    penalised: bool  # more output sentences than scenes: SAMSA is 0 by definition

    def to_details(self) -> dict[str, Any]:
        """Plain JSON-ready data (written by hand: dataclasses.asdict's deep copy is slow)."""

        def part(p: PartResult) -> dict[str, Any]:
            return {
                "role": p.role,
                "text": p.text,
                "centre": p.centre,
                "found": p.found,
                "score": p.score,
                "matches": list(p.matches),
                "remote": p.remote,
            }

        return {
            "n_scenes": self.n_scenes,
            "n_sentences": self.n_sentences,
            "sentences": list(self.sentences),
            "scenes": [
                {
                    "position": s.position,
                    "text": s.text,
                    "sentence": s.sentence,
                    "n_alignments": s.n_alignments,
                    "main_relation": part(s.main_relation),
                    "participants": [part(p) for p in s.participants],
                    "score": s.score,
                }
                for s in self.scenes
            ],
            "samsa": self.samsa,
            "samsa_abl": self.samsa_abl,
            "penalised": self.penalised,
        }


def _part(
    role: str,
    scene: SceneSpec,
    unit: Sequence[int],
    centre: Sequence[int],
    links: dict[int, WordLink],
    out_tokens: Sequence[str],
) -> PartResult:
    if not centre:
        return PartResult(role, "", "", None, EMPTY_PART_SCORE)
    found = all(i in links for i in centre)
    matches = [
        f"{scene.tokens[i]}→{out_tokens[links[i].out]} ({links[i].via})"
        for i in centre
        if i in links
    ]
    return PartResult(
        role,
        scene.text(unit),
        scene.text(centre),
        found,
        1.0 if found else 0.0,
        matches,
    )


def _match_sentences(
    scenes: Sequence[SceneSpec],
    sentence_tokens: Sequence[Sequence[str]],
    aligner: WordAligner,
) -> list[tuple[int | None, dict[int, WordLink]]]:
    allow_shared = len(scenes) > len(sentence_tokens)
    taken: set[int] = set()
    matches: list[tuple[int | None, dict[int, WordLink]]] = []
    for scene in scenes:
        span = scene.span()
        best: tuple[int, int] = (0, 0)
        best_j: int | None = None
        best_links: dict[int, WordLink] = {}
        for j, tokens in enumerate(sentence_tokens):
            if not allow_shared and j in taken:
                continue
            links = aligner.align(scene.tokens, span, tokens)
            # Content words decide; function words ("the", "of") only break ties.
            key = (sum(1 for i in links if is_content(scene.tokens[i])), len(links))
            if key > best:
                best, best_j, best_links = key, j, links
        if best_j is not None:
            taken.add(best_j)
        matches.append((best_j, best_links))
    return matches


def score_samsa(
    scenes: Sequence[SceneSpec],
    output: str,
    aligner: WordAligner,
    *,
    sentences: Sequence[str] | None = None,
) -> SamsaResult:
    """Score one output against the source's scenes (at least one scene)."""
    if not scenes:
        raise ValueError("SAMSA needs at least one scene of the source")
    sents = list(sentences) if sentences is not None else split_sentences(output)
    sentence_tokens = [words(s) for s in sents]
    n_in, n_out = len(scenes), len(sents)

    results: list[SceneResult] = []
    for scene, (j, links) in zip(
        scenes, _match_sentences(scenes, sentence_tokens, aligner), strict=True
    ):
        out_tokens = sentence_tokens[j] if j is not None else []
        mr = _part(
            "main relation", scene, scene.main_relation, scene.main_relation, links, out_tokens
        )
        parts = []
        for p in scene.participants:
            # Drawn without a centre: its content words stand in for it ("the dog" → "dog").
            centre = (
                p.centre or tuple(i for i in p.tokens if is_content(scene.tokens[i])) or p.tokens
            )
            part = _part("participant", scene, p.tokens, centre, links, out_tokens)
            part.remote = p.remote
            parts.append(part)
        part_score = sum(p.score for p in parts) / len(parts) if parts else EMPTY_PART_SCORE
        results.append(
            SceneResult(
                position=scene.position,
                text=scene.text(),
                sentence=j,
                n_alignments=len(links),
                main_relation=mr,
                participants=parts,
                score=0.5 * mr.score + 0.5 * part_score,
            )
        )

    total = sum(r.score for r in results)
    penalised = n_out > n_in
    samsa = 0.0 if penalised else (n_out / n_in**2) * total
    return SamsaResult(
        n_scenes=n_in,
        n_sentences=n_out,
        sentences=sents,
        scenes=results,
        samsa=samsa,
        samsa_abl=total / n_in,
        penalised=penalised,
    )
