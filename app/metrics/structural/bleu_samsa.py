"""BLEU-SAMSA: the arithmetic and geometric means of BLEU and SAMSA (Sulem et al. 2018).

The SAMSA paper combines its structural measure with BLEU's lexical one by averaging the
two, arithmetically and geometrically. Both means are computed from the scores already
stored in the study — BLEU with this metric's reference mode and default options, SAMSA with
its defaults (or `samsa_embeddings=false`) — and nothing is re-scored: run `bleu` and `samsa`
first (in one `score` call they may come before it). An item whose BLEU or SAMSA score is
missing, failed or stale gets an error that says which to run.

value = the mean of BLEU's value and SAMSA's value, both 0–100; raw = the same mean on the
0–1 scale. The stored values are folded into the input hash, so re-scoring BLEU or SAMSA
makes the means stale (a job that scores all three at once records the means against the
values it found before scoring BLEU and SAMSA, so the next job computes them once more).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from meaningbench.metrics.base import (
    Availability,
    ItemScore,
    MetricInfo,
    Pair,
    input_hash,
    variant_input_hash,
)
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.runtime import CancelToken

if TYPE_CHECKING:
    from meaningbench.metrics.study_inputs import StudyInputs

# Per item id: its stored (BLEU value, SAMSA value); a missing or stale score is an error text.
Stored = Mapping[int, tuple[float | str, float | str]]
StoredProvider = Callable[[Sequence[Pair]], Stored]


def arithmetic_mean(bleu: float, samsa: float) -> float:
    return (bleu + samsa) / 2.0


def geometric_mean(bleu: float, samsa: float) -> float:
    return math.sqrt(max(bleu, 0.0) * max(samsa, 0.0))


def study_stored_provider(study: StudyInputs, mode: str, samsa_embeddings: bool) -> StoredProvider:
    """Read each pair's BLEU and SAMSA scores from the study, checked against its texts."""
    from meaningbench.metrics.lexical.sacrebleu_metrics import BleuMetric
    from meaningbench.metrics.structural.samsa import SamsaMetric

    bleu = BleuMetric(reference_mode=mode)
    samsa = SamsaMetric(embeddings=samsa_embeddings)
    samsa.use_study(study)

    def provide(pairs: Sequence[Pair]) -> dict[int, tuple[float | str, float | str]]:
        ids = [p.item_id for p in pairs]
        stored_bleu = study.newest_scores("bleu", bleu.config_hash(), ids)
        stored_samsa = study.newest_scores("samsa", samsa.config_hash(), ids)
        scenes = samsa.extra_inputs(pairs) or [""] * len(pairs)
        out: dict[int, tuple[float | str, float | str]] = {}
        for pair, scene_print in zip(pairs, scenes, strict=True):
            b = _current(
                stored_bleu.get(pair.item_id),
                input_hash(pair.source, pair.output, pair.references),
                "BLEU",
                "bleu",
            )
            s = _current(
                stored_samsa.get(pair.item_id),
                variant_input_hash(pair.source, pair.output, (), scene_print),
                "SAMSA",
                "samsa",
            )
            out[pair.item_id] = (b, s)
        return out

    return provide


def _current(
    stored: tuple[float | None, str | None] | None, expected: str, label: str, spec: str
) -> float | str:
    if stored is None or stored[0] is None:
        return f"no stored {label} score for this item: run {spec} first"
    if stored[1] != expected:
        return f"the stored {label} score is stale (its texts or scenes changed): run {spec} again"
    return stored[0]


class _BleuSamsaBase(LanguageMetric):
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "samsa_embeddings": True,
        "language": "en",
    }
    option_types: ClassVar[dict[str, Any]] = {"language": str}
    languages = frozenset({"en"})
    language_reason = "it combines BLEU with SAMSA, which is English only"

    def availability(self) -> Availability:
        return self.language_availability()

    @staticmethod
    def mean(bleu: float, samsa: float) -> float:
        raise NotImplementedError

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._provider: StoredProvider | None = None

    def use_stored(self, provider: StoredProvider) -> None:
        """Take the BLEU and SAMSA values from `provider` instead of the study."""
        self._provider = provider

    def _stored(self, pairs: Sequence[Pair]) -> Stored:
        if self._provider is not None:
            return self._provider(pairs)
        if self.study_inputs is None:
            reason = "BLEU-SAMSA reads stored BLEU and SAMSA scores and needs a study"
            return {p.item_id: (reason, reason) for p in pairs}
        return study_stored_provider(
            self.study_inputs, self.reference_mode, bool(self.config["samsa_embeddings"])
        )(pairs)

    def extra_inputs(self, pairs: Sequence[Pair]) -> list[str] | None:
        stored = self._stored(pairs)
        return [f"{stored[p.item_id][0]!r}|{stored[p.item_id][1]!r}" for p in pairs]

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        stored = self._stored(pairs)
        out: list[ItemScore] = []
        for pair in pairs:
            bleu, samsa = stored[pair.item_id]
            if isinstance(bleu, str) or isinstance(samsa, str):
                problems = [x for x in (bleu, samsa) if isinstance(x, str)]
                out.append(ItemScore(None, None, error="; ".join(problems)))
                continue
            value = self.mean(bleu, samsa)
            details = {"bleu": bleu, "samsa": samsa}
            out.append(ItemScore(value, self.mean(bleu / 100.0, samsa / 100.0), details))
        return out


class BleuSamsaAmMetric(_BleuSamsaBase):
    info = MetricInfo(
        name="bleu_samsa_am",
        label="BLEU-SAMSA (AM)",
        family="structural",
        description="Arithmetic mean of the stored BLEU and SAMSA scores (Sulem et al. 2018); "
        "run bleu and samsa first.",
        needs_references=True,
        reference="(BLEU + SAMSA) / 2 of the stored scores (Sulem et al. 2018), hand values",
        parity_test="tests/metrics/test_bleu_samsa.py::test_through_the_scoring_job_from_stored_scores",
    )

    @staticmethod
    def mean(bleu: float, samsa: float) -> float:
        return arithmetic_mean(bleu, samsa)


class BleuSamsaGmMetric(_BleuSamsaBase):
    info = MetricInfo(
        name="bleu_samsa_gm",
        label="BLEU-SAMSA (GM)",
        family="structural",
        description="Geometric mean of the stored BLEU and SAMSA scores (Sulem et al. 2018); "
        "run bleu and samsa first.",
        needs_references=True,
        reference="√(BLEU · SAMSA) of the stored scores (Sulem et al. 2018), hand values",
        parity_test="tests/metrics/test_bleu_samsa.py::test_through_the_scoring_job_from_stored_scores",
    )

    @staticmethod
    def mean(bleu: float, samsa: float) -> float:
        return geometric_mean(bleu, samsa)
