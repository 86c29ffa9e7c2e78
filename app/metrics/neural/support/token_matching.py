"""BERTScore's explanation: the token matching stored with a score, read back for the view.

The score's details carry, for the candidate and the reference, the tokens, each token's
best match on the other side and that match's cosine similarity (`greedy.alignment_details`);
the explanation is that matching, not a recomputation (no model is loaded to explain).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from meaningbench.metrics.explain import (
    ExplainItem,
    Explanation,
    NoExplanation,
    TokenAlignment,
    TokenMatching,
)

NOT_STORED = (
    "No {label} score for this output yet. Run {label} from the metric battery; the "
    "matching it computed is drawn here."
)


def from_bertscore_details(details: Mapping[str, Any]) -> TokenAlignment:
    """Read the alignment stored with a BERTScore score; ValueError when it has none."""
    align = details.get("alignment")
    if not isinstance(align, Mapping) or "cand" not in align or "ref" not in align:
        raise ValueError("this BERTScore score was stored without its token alignment")
    cand, ref = align["cand"], align["ref"]
    return TokenAlignment(
        ref_tokens=tuple(str(t) for t in ref["tokens"]),
        cand_tokens=tuple(str(t) for t in cand["tokens"]),
        ref_best=tuple(int(i) for i in ref["best"]),
        ref_sim=tuple(float(s) for s in ref["sim"]),
        cand_best=tuple(int(i) for i in cand["best"]),
        cand_sim=tuple(float(s) for s in cand["sim"]),
        P=float(details.get("P") or 0.0),
        R=float(details.get("R") or 0.0),
        F=float(details.get("F1", details.get("F")) or 0.0),
    )


def stored_matching(item: ExplainItem, label: str, reference_mode: str) -> Explanation:
    """The matching a stored score was computed from, or why there is none to draw."""
    if item.details is None:
        return Explanation(NoExplanation(NOT_STORED.format(label=label)))
    try:
        alignment = from_bertscore_details(item.details)
    except (ValueError, KeyError, TypeError) as exc:
        return Explanation(NoExplanation(f"{exc}. Run {label} again with its alignment on."))
    pair = item.pair
    if reference_mode == "references" and pair.references != (pair.source,):
        ref_index = item.details.get("ref_index")
        against = "reference" if ref_index is None else f"reference {int(ref_index) + 1}"
    else:
        against = "source"
    note = (
        f"The token matching the stored score was computed from (F1 {alignment.F:.3f}, shown "
        f"as {item.value:.1f} on 0–100)"
        if item.value is not None
        else "The token matching of the stored score"
    )
    return Explanation(TokenMatching(alignment, against), f"{note}, {ran_on(item.details)}.")


def ran_on(details: Mapping[str, Any]) -> str:
    """Which backend ran the encoder, as the score's details say (a score stored before
    the ONNX backend existed, or a torch run, has no `backend` key)."""
    if details.get("backend") == "onnx":
        return "its encoder run by ONNX Runtime"
    return "its encoder run by torch"
