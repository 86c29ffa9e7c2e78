"""BERTScore (Zhang et al. 2020), computed here for speed and for the token alignment.

Scores equal `bert_score.BERTScorer` (0.3.13) given the same model, layer, idf corpus and
baseline. Per item: raw = F1 (rescaled when asked), value = 100·max(0, raw), details = P, R,
F1 (and the unrescaled ones), plus the alignment of tokens. With several references each of
P, R and F1 is the best over the references, as in bert-score; the alignment shown is that of
the reference with the best F1.

idf: the weights come from the distinct reference texts of the whole study (the sources in
source mode), handed over once by `prepare(pairs)` before scoring. Without `prepare`, the
pairs of the first `score_batch` call stand in for the study. A text repeated across items
(a source scored against ten systems) counts as one document.

Long texts: bert-score cuts every text at the model's maximum length (512 tokens) without a
word. Here a longer text is embedded in overlapping windows and stitched back
(meaningbench.metrics.neural.support.windows); the details say how many tokens and windows each
side had. `long_texts="truncate"` cuts as bert-score does.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from meaningbench.errors import UserError
from meaningbench.metrics.base import Availability, ItemScore, MetricInfo, Pair, pair_references
from meaningbench.metrics.explain import ExplainItem, Explanation
from meaningbench.metrics.neural.support.baselines import (
    Baseline,
    baseline_path,
    read_baseline,
    read_rows,
)
from meaningbench.metrics.neural.support.cache import DEFAULT_DISK_MB
from meaningbench.metrics.neural.support.common import ENCODER_OPTIONS, NeuralMetric
from meaningbench.metrics.neural.support.encoding import (
    LongTexts,
    special_frame,
    special_ids,
    token_embeddings,
    token_ids,
    window_length,
)
from meaningbench.metrics.neural.support.greedy import (
    IdfWeights,
    Match,
    alignment_details,
    greedy_match_many,
    weights,
)
from meaningbench.metrics.neural.support.idf_corpus import idf_corpus, idf_from_problem
from meaningbench.metrics.neural.support.models import resolve_model
from meaningbench.metrics.neural.support.token_matching import stored_matching
from meaningbench.metrics.neural.support.windows import count_windows, window_stride
from meaningbench.runtime import CancelToken
from meaningbench.settings import DEFAULT_ENCODER

PACKAGED_BASELINES = Path(__file__).parent  # baseline_<model key>.csv files shipped with us
# The default layer per model. For the embedded MiniLM it was chosen on the CSMD ratings (see
# the README); the others are bert-score's choices (tuned on WMT16).
DEFAULT_LAYERS = {
    DEFAULT_ENCODER: 6,
    "roberta-large": 17,
    "roberta-base": 10,
    "bert-base-uncased": 9,
    "bert-large-uncased": 18,
    "bert-base-multilingual-cased": 9,
    "distilbert-base-uncased": 5,
    "xlm-roberta-large": 17,
    "microsoft/deberta-xlarge-mnli": 40,
}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


class BertScoreMetric(NeuralMetric):
    info = MetricInfo(
        name="bertscore",
        label="BERTScore",
        family="neural",
        description="Greedy matching of contextual token embeddings (F1; P and R in details).",
        needs_references=True,
        needs_model=True,
        reference="bert-score 0.3.13 (BERTScorer), agreeing to 1e-5",
        parity_test="tests/metrics/neural/test_bertscore.py::test_equals_bert_score",
    )
    defaults = {
        "model": DEFAULT_ENCODER,
        "layer": None,  # None = the model's default layer
        "idf": False,
        # The idf corpus: None = the texts the outputs are compared with (the references, or
        # the sources in source mode); "sources", "references", "outputs", or a text file
        # with one document per line.
        "idf_from": None,
        "rescale": False,
        "baseline": None,  # a baseline file; None = the stored one for the model
        "reference_mode": "source",
        "alignment": True,
        "embedding_cache_mb": DEFAULT_DISK_MB,
        "long_texts": "windows",
        **ENCODER_OPTIONS,
    }
    option_types: ClassVar[dict[str, Any]] = {
        **NeuralMetric.option_types,
        "long_texts": LongTexts,
    }
    # Added after scores existed: runs with the default corpus keep their config hash.
    hashed_when_set: ClassVar[frozenset[str]] = frozenset({"idf_from", "quantize"})

    def explain(self, item: ExplainItem) -> Explanation:
        """The stored token matching (no model is loaded to explain)."""
        return stored_matching(item, self.info.label, self.reference_mode)

    def __init__(self, **config: Any) -> None:
        super().__init__(**config)
        self._idf_docs: list[str] | None = None
        self._idf: IdfWeights | None = None
        self._idf_corpus_hash: str | None = None  # part of the config hash, with idf on

    # --- configuration -------------------------------------------------------------------
    def layer(self) -> int:
        if self.config.get("layer") is not None:
            return int(self.config["layer"])
        name = self.model_name() or DEFAULT_ENCODER
        if name in DEFAULT_LAYERS:
            return DEFAULT_LAYERS[name]
        return num_layers_from_config(name)

    def onnx_part(self) -> str:
        return f"L{self.layer()}"

    def score_config(self) -> dict[str, Any]:
        cfg = super().score_config()
        with contextlib.suppress(UserError):
            cfg["layer"] = self.layer()
        if self.config["idf"] and self._idf_corpus_hash is not None:
            cfg["idf_corpus"] = self._idf_corpus_hash
        if not self.config["idf"]:
            cfg.pop("idf_from", None)  # no idf: where it would come from changes nothing
        return cfg

    def baseline_file(self) -> Path:
        if self.config.get("baseline"):
            return Path(str(self.config["baseline"])).expanduser()
        ref = resolve_model(self.model_name())
        stored = baseline_path(ref.key)
        packaged = PACKAGED_BASELINES / f"baseline_{ref.key}.csv"
        return stored if stored.exists() or not packaged.exists() else packaged

    def availability(self) -> Availability:
        base = super().availability()
        if not base.ok:
            return base
        problem = idf_from_problem(self.config.get("idf_from"))
        if problem is not None:
            return Availability(False, problem)
        if not self.config["rescale"]:
            return base
        try:
            layer = self.layer()
            path = self.baseline_file()
            rows = read_rows(path) if path.exists() else {}
        except UserError as exc:
            return Availability(False, str(exc))
        if layer not in rows:
            return Availability(
                False,
                f"no rescaling baseline for {self.model_name()} layer {layer}: run "
                f"`meaningbench baseline --model {self.model_name()} --layer {layer}`",
            )
        return base

    # --- idf ---------------------------------------------------------------------------------
    def prepare(self, pairs: Iterable[Pair]) -> None:
        """Take the idf corpus from the whole study: by default the distinct references of all
        its pairs, else the texts `idf_from` names; and export the encoder for ONNX Runtime
        when it is to run there."""
        super().prepare(pairs)
        self.set_idf_corpus(idf_corpus(self.config.get("idf_from"), list(pairs), self.study_inputs))

    def set_idf_corpus(self, texts: Iterable[str]) -> None:
        self._idf_docs = list(dict.fromkeys(texts))
        self._idf = None
        if self.config["idf"]:
            joined = "\n".join(sorted(self._idf_docs)).encode("utf-8")
            self._idf_corpus_hash = hashlib.sha1(joined).hexdigest()[:16]

    def _idf_weights(self, pairs: Sequence[Pair]) -> IdfWeights | None:
        if not self.config["idf"]:
            return None
        if self._idf is None:
            if self._idf_docs is None:
                self.prepare(pairs)
            assert self._idf_docs is not None
            ids = token_ids(self.scoring_model(), self._idf_docs, truncate=not self._windowed())
            self._idf = IdfWeights.from_token_ids(ids)
        return self._idf

    # --- scoring -----------------------------------------------------------------------------
    def _windowed(self) -> bool:
        return bool(self.config["long_texts"] == "windows")

    def _window_frame(self) -> tuple[int, int, int]:
        """(ids per window, leading special tokens, trailing special tokens)."""
        loaded = self.scoring_model()
        return (window_length(loaded), *special_frame(loaded.tokenizer))

    @staticmethod
    def _length_details(
        frame: tuple[int, int, int], c_ids: tuple[int, ...], r_ids: tuple[int, ...]
    ) -> dict[str, Any]:
        """Tokens and windows of the output and of the reference it was matched with."""
        limit, prefix, suffix = frame
        windows = {
            side: count_windows(len(ids), limit, prefix, suffix)
            for side, ids in (("output", c_ids), ("reference", r_ids))
        }
        out: dict[str, Any] = {
            "tokens": {"output": len(c_ids), "reference": len(r_ids)},
            "windows": windows,
        }
        if max(windows.values()) > 1:
            out["window_stride"] = window_stride(limit - prefix - suffix)
        return out

    def score_pairs_raw(
        self,
        cand_ref: Sequence[tuple[str, Sequence[str]]],
        cancel: CancelToken | None = None,
        idf: IdfWeights | None = None,
        persist_refs: bool = True,
    ) -> list[tuple[tuple[float, float, float], int, Match, tuple[int, ...], tuple[int, ...]]]:
        """Per candidate: unrescaled (P, R, F1), the best reference's index, its match and the
        token ids of the candidate and of that reference."""
        loaded = self.scoring_model()
        layer = self.layer()
        refs = [r for _, rs in cand_ref for r in rs]
        embs = token_embeddings(
            loaded,
            layer,
            [c for c, _ in cand_ref] + refs,
            batch_size=int(self.config["batch_size"]),
            cancel=cancel,
            disk_mb=float(self.config.get("embedding_cache_mb") or 0),
            persist=set(refs) if persist_refs else set(),
            long_texts=self.config["long_texts"],
        )
        specials = special_ids(loaded)
        if cancel is not None:
            cancel.check()
        # Every (candidate, reference) comparison at once; then the best reference per item.
        flat = [(n, k) for n, (_, rs) in enumerate(cand_ref) for k in range(len(rs))]
        weights_of: dict[str, list[float]] = {}

        def weighted(text: str) -> list[float]:
            if text not in weights_of:
                weights_of[text] = weights(embs[text].ids, idf, specials)
            return weights_of[text]

        matches = greedy_match_many(
            [
                (
                    embs[cand_ref[n][0]],
                    embs[cand_ref[n][1][k]],
                    weighted(cand_ref[n][0]),
                    weighted(cand_ref[n][1][k]),
                )
                for n, k in flat
            ]
        )
        by_item: list[list[tuple[int, Match]]] = [[] for _ in cand_ref]
        for (n, k), m in zip(flat, matches, strict=True):
            by_item[n].append((k, m))
        out = []
        for (cand, rs), found in zip(cand_ref, by_item, strict=True):
            best = None
            prf = (-math.inf, -math.inf, -math.inf)
            for k, m in found:
                prf = (max(prf[0], m.precision), max(prf[1], m.recall), max(prf[2], m.f1))
                if best is None or m.f1 > best[1].f1:
                    best = (k, m)
            assert best is not None
            out.append((prf, best[0], best[1], embs[cand].ids, embs[rs[best[0]]].ids))
        return out

    def score_batch(
        self, pairs: Sequence[Pair], cancel: CancelToken | None = None
    ) -> list[ItemScore]:
        if not pairs:
            return []
        idf = self._idf_weights(pairs)
        baseline = self._baseline() if self.config["rescale"] else None
        raw = self.score_pairs_raw([(p.output, pair_references(p)) for p in pairs], cancel, idf)
        tokenizer = self.scoring_model().tokenizer
        tokens_of: dict[tuple[int, ...], list[str]] = {}  # a source shared by items, once
        frame = self._window_frame() if self._windowed() else None
        onnx = self.scoring_model().backend == "onnx"

        def tokens(ids: tuple[int, ...]) -> list[str]:
            if ids not in tokens_of:
                tokens_of[ids] = tokenizer.convert_ids_to_tokens(list(ids))
            return tokens_of[ids]

        results = []
        for pair, ((p, r, f), k, match, c_ids, r_ids) in zip(pairs, raw, strict=True):
            details: dict[str, Any] = {"P": _finite(p), "R": _finite(r), "F1": _finite(f)}
            if baseline is not None:
                details["unrescaled"] = dict(details)
                p, r, f = baseline.rescale(p, r, f)
                details.update({"P": _finite(p), "R": _finite(r), "F1": _finite(f)})
            if len(pair_references(pair)) > 1:
                details["ref_index"] = k
            if frame is not None:
                details.update(self._length_details(frame, c_ids, r_ids))
            if onnx:  # what `explain` says ran the encoder (torch when absent)
                details["backend"] = "onnx"
            if self.config["alignment"]:
                details["alignment"] = alignment_details(tokens(c_ids), tokens(r_ids), match)
            value = 100.0 * max(0.0, f) if math.isfinite(f) else None
            results.append(ItemScore(value=value, raw=_finite(f), details=details))
        return results

    def _baseline(self) -> Baseline:
        return read_baseline(self.baseline_file(), self.layer())


LAYER_COUNT_KEYS = ("num_hidden_layers", "n_layers", "num_layers")


def num_layers_from_config(name: str) -> int:
    """The last layer of a model, read from its config without loading the weights.

    A local folder's config.json is read as JSON (importing transformers costs seconds);
    anything else, or a config that nests its encoder's, goes through AutoConfig.
    """
    ref = resolve_model(name)
    raw = ref.local_config()
    for key in LAYER_COUNT_KEYS:
        if isinstance(raw.get(key), int):
            return int(raw[key])
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(ref.location, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the configuration of model {name!r}: {exc}") from exc
    for attr in LAYER_COUNT_KEYS:
        value = getattr(config, attr, None)
        if isinstance(value, int):
            return value
    raise UserError(f"cannot tell how many layers model {name!r} has; give --layer")
