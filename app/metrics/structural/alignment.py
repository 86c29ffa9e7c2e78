"""Word alignment between a scene of the source and one output sentence.

SAMSA's paper used Sultan et al.'s monolingual aligner (exact and lemma identity, PPDB
paraphrases, contextual evidence). This one keeps what runs offline: exact match
(case-folded), shared WordNet lemma, and, optionally, cosine similarity of word vectors
above a threshold in place of paraphrase tables. Punctuation never aligns; function words
align only by form or lemma, since their vectors resemble everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from meaningbench.metrics.structural.embeddings import WordEmbedder
from meaningbench.metrics.structural.lemmas import lemma_set
from meaningbench.metrics.structural.tokens import is_content, is_punct, normalise

VIA_ORDER = ("exact", "lemma", "embedding")


@dataclass(frozen=True)
class WordLink:
    src: int  # token index in the scene's tokens
    out: int  # token index in the output sentence
    via: str  # exact | lemma | embedding
    similarity: float = 1.0


class WordAligner:
    def __init__(
        self,
        *,
        use_lemmas: bool = True,
        embedder: WordEmbedder | None = None,
        threshold: float = 0.8,
    ) -> None:
        self.use_lemmas = use_lemmas
        self.embedder = embedder
        self.threshold = threshold
        # The same word pairs come back for every output of a source: decide each once.
        self._links: dict[tuple[str, str], WordLink | None] = {}

    def describe(self) -> str:
        parts = ["exact"]
        if self.use_lemmas:
            parts.append("lemma")
        if self.embedder is not None:
            parts.append(f"embedding ≥ {self.threshold:g}")
        return " + ".join(parts)

    def prepare(self, words: Iterable[str]) -> None:
        """Encode every content word up front, in batches, before the per-pair loop."""
        if self.embedder is not None:
            self.embedder.encode(normalise(w) for w in words if is_content(w))

    def link(self, a: str, b: str) -> WordLink | None:
        """How two words align, if they do (src/out indices left at -1)."""
        key = (a, b)
        if key not in self._links:
            if len(self._links) > 500_000:
                self._links.clear()
            self._links[key] = self._decide(a, b)
        return self._links[key]

    def _decide(self, a: str, b: str) -> WordLink | None:
        if is_punct(a) or is_punct(b):
            return None
        na, nb = normalise(a), normalise(b)
        if na == nb:
            return WordLink(-1, -1, "exact", 1.0)
        if self.use_lemmas and lemma_set(na) & lemma_set(nb):
            return WordLink(-1, -1, "lemma", 1.0)
        if self.embedder is not None and is_content(a) and is_content(b):
            sim = self.embedder.similarity(na, nb)
            if sim >= self.threshold:
                return WordLink(-1, -1, "embedding", sim)
        return None

    def align(
        self,
        src_tokens: Sequence[str],
        src_indices: Iterable[int],
        out_tokens: Sequence[str],
    ) -> dict[int, WordLink]:
        """The best output word for each chosen source word that aligns at all.

        Best = the strongest kind of evidence (exact over lemma over embedding), then the
        highest similarity, then the first position.
        """
        links: dict[int, WordLink] = {}
        for i in src_indices:
            best: WordLink | None = None
            for j, word in enumerate(out_tokens):
                found = self.link(src_tokens[i], word)
                if found is None:
                    continue
                cand = WordLink(i, j, found.via, found.similarity)
                if best is None or _rank(cand) > _rank(best):
                    best = cand
            if best is not None:
                links[i] = best
        return links


def _rank(link: WordLink) -> tuple[int, float]:
    return (-VIA_ORDER.index(link.via), link.similarity)
