"""SARI as a metric of the battery: sentence SARI per item, EASSE's corpus SARI per system.

Per item the default is HF evaluate's sentence SARI (`item_variant="evaluate"`); EASSE's
corpus formula applied to one item is available as `item_variant="easse"` (it gives an
identical output only 33.3: with no n-gram added, its add F1 is 0). Deletion is scored as
EASSE does by default (F1); `deletion="precision"` is the other published choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.explain import ExplainItem, Explanation, references_note, stored_note
from meaningbench.metrics.languages import LanguageMetric
from meaningbench.metrics.lexical.common import LexicalMetric
from meaningbench.metrics.lexical.sacrebleu_metrics import tokenizer_availability
from meaningbench.metrics.lexical.sari import (
    DeletionScore,
    SariScore,
    corpus_sari,
    easse_item_sari,
    explain_sari,
    sentence_sari,
)
from meaningbench.metrics.lexical.text import SacrebleuTokenizer, language_tokenizer

ItemVariant = Literal["evaluate", "easse"]


class SariMetric(LanguageMetric, LexicalMetric):
    info: ClassVar[MetricInfo] = MetricInfo(
        name="sari",
        label="SARI",
        family="lexical",
        description="SARI (Xu et al. 2016): sentence SARI as HF evaluate per item, corpus SARI "
        "as EASSE per system; details carry the add / keep / delete scores.",
        needs_references=True,
        reference="HF evaluate's sari (sentence), EASSE's corpus_sari (corpus)",
        parity_test="tests/metrics/lexical/test_sari.py::test_sentence_sari_matches_published_values",
    )
    defaults: ClassVar[dict[str, Any]] = {
        "reference_mode": "source",
        "item_variant": "evaluate",
        "deletion": "f1",
        "lowercase": True,
        "tokenize": "13a",
        "language": "en",
    }
    packages = ("sacrebleu",)
    explains_live = True
    option_types: ClassVar[dict[str, Any]] = {
        "item_variant": ItemVariant,
        "deletion": DeletionScore,
        "lowercase": bool,
        "tokenize": SacrebleuTokenizer,
        "language": str,
    }

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        language_tokenizer(self.config, config)

    def availability(self) -> Availability:
        return tokenizer_availability(str(self.config["tokenize"]))

    def _item(self, pair: Pair) -> SariScore:
        kwargs = {"lowercase": bool(self.config["lowercase"]), "tokenize": self.config["tokenize"]}
        refs = pair_references(pair)
        if self.config["item_variant"] == "easse":
            return easse_item_sari(
                pair.source, pair.output, refs, deletion=self.config["deletion"], **kwargs
            )
        return sentence_sari(pair.source, pair.output, refs, **kwargs)

    def score_one(self, pair: Pair) -> ItemScore:
        score = self._item(pair)
        details = {"add": score.add, "keep": score.keep, "delete": score.delete}
        return ItemScore(score.sari, score.sari, details)

    def explain(self, item: ExplainItem) -> Explanation:
        """The added, kept and deleted n-grams behind the sentence SARI of one output."""
        pair = item.pair
        exp = explain_sari(
            pair.source,
            pair.output,
            list(pair_references(pair)),
            lowercase=bool(self.config["lowercase"]),
            tokenize=str(self.config["tokenize"]),
        )
        note = references_note(pair, self.reference_mode)
        if self.config["item_variant"] == "easse":
            note += (
                " Shown: sentence SARI (HF evaluate); this run scores EASSE's corpus formula "
                "on the one item, from the same n-grams."
            )
            if item.value is not None:
                note += f" Its stored score is {item.value:.2f}."
        else:
            note += " " + stored_note(self.info.label, item.value, exp.sari)
        return Explanation(exp, note)

    def corpus_score(self, pairs: Sequence[Pair]) -> float | None:
        if not pairs:
            return None
        return corpus_sari(
            [p.source for p in pairs],
            [p.output for p in pairs],
            [pair_references(p) for p in pairs],
            deletion=self.config["deletion"],
            lowercase=bool(self.config["lowercase"]),
            tokenize=self.config["tokenize"],
        ).sari
