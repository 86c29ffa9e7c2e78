"""SARI (Xu et al. 2016) in the two variants the community uses, and its explanation.

- *Sentence SARI* as HF `evaluate` computes it: lowercase + sacrebleu 13a tokenization,
  n = 1..4; keep and add scored with F1, deletion with precision only; an empty denominator
  counts as 1 (so an output identical to a source that is its only reference scores 100);
  averaged over n. Tokens come from `normalized.split(" ")`, as there.
- *Corpus SARI* as EASSE computes it (`easse.sari.corpus_sari`, default arguments): the
  same normalization; add / keep / delete counts pooled over the whole corpus, then per n
  precision, recall and F1 (deletion: F1, or precision only as an option) where an empty
  denominator counts as 0; F1 averaged over n. Tokens come from `normalized.split()`.

Both are computed from the same per-item n-gram counts, held as plain dicts of counts and
memoized per text (a source is shared by every system's output of it).

Notation below: S, C, R are the n-gram counts of the source, the output ("candidate") and
all references together; k is the number of references. Source and output counts are
multiplied by k so that they compare with the pooled reference counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, get_args

from meaningbench.metrics.lexical.text import normalize

NGRAM_ORDER = 4
DeletionScore = Literal["f1", "precision"]
DELETION_SCORES: tuple[str, ...] = get_args(DeletionScore)

Counts = dict[str, int]
NgramCounts = tuple[Counts, ...]  # one dict per n = 1..4


@dataclass(frozen=True)
class SariScore:
    """SARI and its three operation scores, each on 0–100."""

    sari: float
    add: float
    keep: float
    delete: float


def _ngrams(tokens: list[str]) -> NgramCounts:
    out: list[Counts] = []
    for n in range(1, NGRAM_ORDER + 1):
        counts: Counts = {}
        for i in range(len(tokens) - n + 1):
            gram = tokens[i] if n == 1 else " ".join(tokens[i : i + n])
            counts[gram] = counts.get(gram, 0) + 1
        out.append(counts)
    return tuple(out)


@lru_cache(maxsize=2**17)
def _text_ngrams(normalized: str, evaluate_split: bool) -> NgramCounts:
    # HF evaluate splits on " " (an empty sentence is one empty token); EASSE on whitespace.
    tokens = normalized.split(" ") if evaluate_split else normalized.split() if normalized else []
    return _ngrams(tokens)


@lru_cache(maxsize=2**16)
def _refs_ngrams(normalized_refs: tuple[str, ...], evaluate_split: bool) -> NgramCounts:
    pooled: list[Counts] = [{} for _ in range(NGRAM_ORDER)]
    for ref in normalized_refs:
        for n, counts in enumerate(_text_ngrams(ref, evaluate_split)):
            target = pooled[n]
            for gram, c in counts.items():
                target[gram] = target.get(gram, 0) + c
    return tuple(pooled)


def _prepare(
    source: str, output: str, references: Sequence[str], lowercase: bool, tokenize: str, ev: bool
) -> tuple[NgramCounts, NgramCounts, NgramCounts, int]:
    if not references:
        raise ValueError("SARI needs at least one reference")
    refs = tuple(normalize(r, lowercase, tokenize) for r in references)
    return (
        _text_ngrams(normalize(source, lowercase, tokenize), ev),
        _text_ngrams(normalize(output, lowercase, tokenize), ev),
        _refs_ngrams(refs, ev),
        len(refs),
    )


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p > 0 or r > 0 else 0.0


def _sentence_ngram_scores(s: Counts, c: Counts, r: Counts, k: int) -> tuple[float, float, float]:
    """(keep F1, deletion precision, add F1) for one n, exactly as HF evaluate's SARIngram."""
    keep_n = 0  # distinct n-grams kept (source ∩ output)
    keep_good_ratio = 0.0  # Σ over kept n-grams of (kept and in references) / kept
    keep_good = 0  # Σ of (kept and in references)
    keep_all = 0  # Σ over source n-grams of min(k·S, R): what the references keep
    del_n = 0
    del_good_ratio = 0.0
    for gram, sc in s.items():
        ks = k * sc
        cc = c.get(gram, 0)
        rc = r.get(gram, 0)
        if rc:
            keep_all += ks if ks < rc else rc
        if cc:
            kept = ks if sc < cc else k * cc
            keep_n += 1
            good = kept if kept < rc else rc
            if good > 0:
                keep_good_ratio += good / kept
                keep_good += good
        deleted = ks - k * cc
        if deleted > 0:
            del_n += 1
            good = deleted - rc
            if good > 0:
                del_good_ratio += good / deleted
    keep_p = keep_good_ratio / keep_n if keep_n else 1.0
    keep_r = keep_good / keep_all if keep_all else 1.0
    del_p = del_good_ratio / del_n if del_n else 1.0

    added = 0
    added_good = 0
    for gram in c:
        if gram not in s:
            added += 1
            if gram in r:
                added_good += 1
    ref_added = sum(1 for gram in r if gram not in s)
    add_p = added_good / added if added else 1.0
    add_r = added_good / ref_added if ref_added else 1.0
    return _f1(keep_p, keep_r), del_p, _f1(add_p, add_r)


def sentence_sari(
    source: str,
    output: str,
    references: Sequence[str],
    *,
    lowercase: bool = True,
    tokenize: str = "13a",
) -> SariScore:
    """Sentence SARI as HF evaluate computes it, with its operation scores (0–100)."""
    s, c, r, k = _prepare(source, output, references, lowercase, tokenize, True)
    keep = delete = add = 0.0
    for n in range(NGRAM_ORDER):
        kp, dl, ad = _sentence_ngram_scores(s[n], c[n], r[n], k)
        keep += kp
        delete += dl
        add += ad
    keep, delete, add = keep / NGRAM_ORDER, delete / NGRAM_ORDER, add / NGRAM_ORDER
    return SariScore(100 * (keep + delete + add) / 3, 100 * add, 100 * keep, 100 * delete)


@dataclass
class SariStats:
    """EASSE's pooled counts per n: (system correct, system total, reference total)."""

    add: list[list[int]] = field(default_factory=lambda: [[0, 0, 0] for _ in range(NGRAM_ORDER)])
    keep: list[list[int]] = field(default_factory=lambda: [[0, 0, 0] for _ in range(NGRAM_ORDER)])
    delete: list[list[int]] = field(default_factory=lambda: [[0, 0, 0] for _ in range(NGRAM_ORDER)])

    def update(self, s: NgramCounts, c: NgramCounts, r: NgramCounts, k: int) -> None:
        for n in range(NGRAM_ORDER):
            sn, cn, rn = s[n], c[n], r[n]
            add, keep, dele = self.add[n], self.keep[n], self.delete[n]
            sys_added = [g for g in cn if g not in sn]
            add[1] += len(sys_added)
            add[2] += sum(1 for g in rn if g not in sn)
            add[0] += sum(1 for g in sys_added if g in rn)
            for gram, sc in sn.items():
                ks = k * sc
                kc = k * cn.get(gram, 0)
                rc = rn.get(gram, 0)
                kept_sys = min(ks, kc)
                kept_ref = min(ks, rc)
                keep[1] += kept_sys
                keep[2] += kept_ref
                keep[0] += min(kept_sys, kept_ref)
                del_sys = ks - kc
                del_ref = ks - rc
                if del_sys > 0:
                    dele[1] += del_sys
                if del_ref > 0:
                    dele[2] += del_ref
                if del_sys > 0 and del_ref > 0:
                    dele[0] += min(del_sys, del_ref)

    def score(self, deletion: str = "f1") -> SariScore:
        """EASSE's `compute_macro_sari`: per-n P/R/F1 (0 when a denominator is 0), averaged."""
        if deletion not in DELETION_SCORES:
            raise ValueError(f"deletion must be one of {DELETION_SCORES}, not {deletion!r}")
        add = keep = dele = 0.0
        for n in range(NGRAM_ORDER):
            add += _prf(*self.add[n])[2] / NGRAM_ORDER
            keep += _prf(*self.keep[n])[2] / NGRAM_ORDER
            p, _, f = _prf(*self.delete[n])
            dele += (f if deletion == "f1" else p) / NGRAM_ORDER
        return SariScore(100 * (add + keep + dele) / 3, 100 * add, 100 * keep, 100 * dele)


def _prf(correct: int, sys_total: int, ref_total: int) -> tuple[float, float, float]:
    p = correct / sys_total if sys_total > 0 else 0.0
    r = correct / ref_total if ref_total > 0 else 0.0
    f = 2 * p * r / (p + r) if p > 0 and r > 0 else 0.0
    return p, r, f


def corpus_sari(
    sources: Sequence[str],
    outputs: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    deletion: str = "f1",
    lowercase: bool = True,
    tokenize: str = "13a",
) -> SariScore:
    """Corpus SARI as EASSE computes it. `references[i]` are item i's references (any
    number per item; EASSE's reference *streams* are the transpose of this).
    """
    if not (len(sources) == len(outputs) == len(references)):
        raise ValueError("sources, outputs and references must have the same length")
    stats = SariStats()
    for src, out, refs in zip(sources, outputs, references, strict=True):
        stats.update(*_prepare(src, out, refs, lowercase, tokenize, False))
    return stats.score(deletion)


def easse_item_sari(
    source: str,
    output: str,
    references: Sequence[str],
    *,
    deletion: str = "f1",
    lowercase: bool = True,
    tokenize: str = "13a",
) -> SariScore:
    """EASSE's corpus formula applied to one item (what `corpus_sari` gives on one sentence)."""
    return corpus_sari(
        [source], [output], [references], deletion=deletion, lowercase=lowercase, tokenize=tokenize
    )


@dataclass(frozen=True)
class NgramOperations:
    """What the output did with the n-grams of one order, and how the references judge it.

    `supported` lists are the part the references agree with, at least in part: an added
    n-gram some reference contains, a kept n-gram some reference keeps, a deleted n-gram some
    reference deletes (credit is proportional, as in the formula).
    Scores are on 0–1, as in the formula; `SariExplanation` carries the 0–100 totals.
    """

    n: int
    added: tuple[str, ...]
    added_supported: tuple[str, ...]
    kept: tuple[str, ...]
    kept_supported: tuple[str, ...]
    deleted: tuple[str, ...]
    deleted_supported: tuple[str, ...]
    add_precision: float
    add_recall: float
    add_f1: float
    keep_precision: float
    keep_recall: float
    keep_f1: float
    delete_precision: float


@dataclass(frozen=True)
class SariExplanation:
    """Sentence SARI (HF evaluate variant) taken apart: total = (add + keep + delete) / 3."""

    source_tokens: tuple[str, ...]
    output_tokens: tuple[str, ...]
    reference_tokens: tuple[tuple[str, ...], ...]
    ngrams: tuple[NgramOperations, ...]  # n = 1..4
    add: float  # 0–100: add F1 averaged over n
    keep: float  # 0–100: keep F1 averaged over n
    delete: float  # 0–100: deletion precision averaged over n
    sari: float


def _explain_order(n: int, s: Counts, c: Counts, r: Counts, k: int) -> NgramOperations:
    kept = [g for g in s if g in c]
    kept_supported = [g for g in kept if r.get(g, 0) > 0]
    deleted = [g for g in s if s[g] > c.get(g, 0)]
    deleted_supported = [g for g in deleted if k * (s[g] - c.get(g, 0)) > r.get(g, 0)]
    added = [g for g in c if g not in s]
    added_supported = [g for g in added if g in r]
    keep_f1, del_p, add_f1 = _sentence_ngram_scores(s, c, r, k)
    # Precision and recall again, for display; the F1 values above are the ones that count.
    keep_ratio = sum(min(k * min(s[g], c[g]), r.get(g, 0)) / (k * min(s[g], c[g])) for g in kept)
    keep_good = sum(min(k * min(s[g], c[g]), r.get(g, 0)) for g in kept)
    keep_all = sum(min(k * s[g], r[g]) for g in s if g in r)
    ref_added = sum(1 for g in r if g not in s)
    return NgramOperations(
        n=n,
        added=tuple(added),
        added_supported=tuple(added_supported),
        kept=tuple(kept),
        kept_supported=tuple(kept_supported),
        deleted=tuple(deleted),
        deleted_supported=tuple(deleted_supported),
        add_precision=len(added_supported) / len(added) if added else 1.0,
        add_recall=len(added_supported) / ref_added if ref_added else 1.0,
        add_f1=add_f1,
        keep_precision=keep_ratio / len(kept) if kept else 1.0,
        keep_recall=keep_good / keep_all if keep_all else 1.0,
        keep_f1=keep_f1,
        delete_precision=del_p,
    )


def explain_sari(
    source: str,
    output: str,
    references: Sequence[str],
    *,
    lowercase: bool = True,
    tokenize: str = "13a",
) -> SariExplanation:
    """The added / kept / deleted n-grams behind a sentence SARI value, order by order."""
    s, c, r, k = _prepare(source, output, references, lowercase, tokenize, True)
    orders = tuple(_explain_order(n + 1, s[n], c[n], r[n], k) for n in range(NGRAM_ORDER))
    add = 100 * sum(o.add_f1 for o in orders) / NGRAM_ORDER
    keep = 100 * sum(o.keep_f1 for o in orders) / NGRAM_ORDER
    delete = 100 * sum(o.delete_precision for o in orders) / NGRAM_ORDER
    return SariExplanation(
        source_tokens=tuple(normalize(source, lowercase, tokenize).split(" ")),
        output_tokens=tuple(normalize(output, lowercase, tokenize).split(" ")),
        reference_tokens=tuple(
            tuple(normalize(ref, lowercase, tokenize).split(" ")) for ref in references
        ),
        ngrams=orders,
        add=add,
        keep=keep,
        delete=delete,
        sari=(add + keep + delete) / 3,
    )
