"""A rating dataset others can trust: a Parquet file of the ratings, spans as JSON Lines and
a dataset card that says how the ratings were gathered and how far raters agree.

The Parquet file holds one row per current rating of a regular item by a rater (named or
anonymous; aggregate labels and hidden controls are the study's business, not the
dataset's), with the item's texts, the rater, the dimension and value, the timing, the
flag, error spans as a list of structs (each with its origin: the rater's, or a judge's
proposal kept or edited), the proposals a rater saw pre-filled with their fate and, for
side-by-side ratings, the position shown.
Hugging Face `datasets` reads it with `load_dataset("parquet", data_files=...)`. pyarrow
is imported only here, when a dataset is written. Asked for one label set (`labels`), the
dataset also holds that set's aggregate labels in their own file.

The files are written as one set: beside the folder first, moved in only when all are
complete (`meaningbench.core.atomic_file.files_in_place`), so a failure leaves an
earlier dataset in the folder as it was. The card's YAML header is written by a YAML
library and every name in its Markdown is escaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import text

from meaningbench.analysis.agreement import AgreementResult, study_agreement
from meaningbench.analysis.label_sets import resolve_label_sets
from meaningbench.analysis.rater_checks import RaterCheck, study_rater_checks
from meaningbench.analysis.resolutions import decision_of
from meaningbench.annotation.proposals import (
    PrefillSummary,
    ProposalFate,
    ProposedSpan,
    fates_of,
    proposal_json,
    spans_with_origin,
    summarise_fates,
)
from meaningbench.annotation.protocols import ProtocolChoice, describe
from meaningbench.annotation.settings import AnnotationSettings, load_settings
from meaningbench.annotation.span_io import SPAN_KEYS, export_spans
from meaningbench.annotation.spans import Span, spans_of
from meaningbench.core.atomic_file import files_in_place
from meaningbench.core.markdown import markdown_text
from meaningbench.core.wording import counted
from meaningbench.db.current_ratings import current_rating_sql
from meaningbench.db.frames import attribute_names, item_attributes
from meaningbench.db.study import Study
from meaningbench.errors import UserError

RATINGS_FILE = "ratings.parquet"
SPANS_FILE = "spans.jsonl"
CARD_FILE = "README.md"
LABELS_FILE = "labels.parquet"

_ROWS_SQL = f"""
    SELECT r.id AS rating_id, r.item_id, d.name AS dataset, i.system, i.source, i.output,
           a.name AS rater, a.kind AS rater_kind, dm.name AS dimension, dm.scale AS scale,
           r.value, r.submitted_at, r.duration_ms, r.flagged, r.comment, r.display
    FROM rating r
    JOIN annotator a ON a.id = r.annotator_id
    JOIN dimension dm ON dm.id = r.dimension_id
    JOIN item i ON i.id = r.item_id
    JOIN dataset d ON d.id = i.dataset_id
    WHERE {current_rating_sql()} AND i.kind = 'regular' AND a.kind IN ('named', 'anonymous')
    ORDER BY r.item_id, a.name, dm.position, r.id
"""


def _arrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise UserError(
            "Writing Parquet needs pyarrow: pip install 'meaningbench[parquet]' "
            "(or pip install pyarrow)."
        ) from exc
    return pa, pq


def rating_rows(study: Study) -> list[dict[str, Any]]:
    import json

    with study.session() as s:
        rows = [dict(r._mapping) for r in s.execute(text(_ROWS_SQL))]
        spans = spans_of(s, [r["rating_id"] for r in rows])
        fates = fates_of(s, [r["rating_id"] for r in rows])
        names = attribute_names(s)
        ids = sorted({r["item_id"] for r in rows})
        attributes = item_attributes(s, (ids[0], ids[-1])) if names and ids else {}
    out = []
    for r in rows:
        if names:
            # One field per attribute name, so every row has the same struct.
            mine = attributes.get(r["item_id"], {})
            r["attributes"] = {n: mine.get(n) for n in names}
        display = r.pop("display")
        if isinstance(display, str):
            display = json.loads(display)
        r["display_position"] = display.get("position") if isinstance(display, dict) else None
        rid = r.pop("rating_id")
        proposed = fates.get(rid, ())
        r["spans"] = [
            {"proposal": None, **sp} for sp in spans_with_origin(spans.get(rid, ()), proposed)
        ]
        r["proposals"] = [proposal_json(f) for f in proposed]
        r["flagged"] = bool(r["flagged"])
        r["submitted_at"] = str(r["submitted_at"]) if r["submitted_at"] is not None else None
        out.append(r)
    return out


def _item_fields(pa: Any) -> list[tuple[str, Any]]:
    """The columns that say which item a row is about, first in both Parquet files."""
    return [
        ("item_id", pa.int64()),
        ("dataset", pa.string()),
        ("system", pa.string()),
        ("source", pa.string()),
        ("output", pa.string()),
    ]


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    pa, pq = _arrow()
    # A span's own fields, then where it came from; a proposal's, then who made it and its fate.
    where = [(k, pa.int64() if k in ("start", "end") else pa.string()) for k in SPAN_KEYS]
    span = pa.struct([*where, ("origin", pa.string()), ("proposal", pa.int64())])
    by = [(k, pa.string()) for k in ("model", "config_hash", "template", "fate")]
    proposal = pa.struct([*where, *by])
    schema = pa.schema(
        [
            *_item_fields(pa),
            ("rater", pa.string()),
            ("rater_kind", pa.string()),
            ("dimension", pa.string()),
            ("scale", pa.string()),
            ("value", pa.float64()),
            ("submitted_at", pa.string()),
            ("duration_ms", pa.int64()),
            ("flagged", pa.bool_()),
            ("comment", pa.string()),
            ("display_position", pa.int64()),
            ("spans", pa.list_(span)),
            ("proposals", pa.list_(proposal)),
        ]
    )
    names = list(rows[0]["attributes"]) if rows and "attributes" in rows[0] else []
    if names:
        # The items' categories (a sentence type): a struct with a text field per name.
        schema = schema.append(pa.field("attributes", pa.struct([(n, pa.string()) for n in names])))
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path)


def _num(x: float, spec: str = ".3f") -> str:
    return format(x, spec) if isinstance(x, int | float) and math.isfinite(x) else "–"


_LABELS_SQL = f"""
    SELECT r.item_id, d.name AS dataset, i.system, i.source, i.output, a.name AS label_set,
           dm.name AS dimension, dm.scale AS scale, r.value, r.n_raters, r.origin
    FROM rating r
    JOIN annotator a ON a.id = r.annotator_id
    JOIN dimension dm ON dm.id = r.dimension_id
    JOIN item i ON i.id = r.item_id
    JOIN dataset d ON d.id = i.dataset_id
    WHERE {current_rating_sql()} AND i.kind = 'regular' AND a.kind = 'aggregate'
      AND a.name = :label_set
    ORDER BY r.item_id, dm.position, r.id
"""


def label_rows(study: Study, label_set: str) -> list[dict[str, Any]]:
    """The current labels of one aggregate label set on regular items; a resolution set's
    (`meaningbench.analysis.resolutions`) also say each item's decision."""
    with study.session() as s:
        found = [dict(r._mapping) for r in s.execute(text(_LABELS_SQL), {"label_set": label_set})]
    decisions = [decision_of(str(r.pop("origin") or "")) for r in found]
    if any(decisions):
        for row, decision in zip(found, decisions, strict=True):
            row["decision"] = decision
    return found


def write_labels_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    pa, pq = _arrow()
    schema = pa.schema(
        [
            *_item_fields(pa),
            ("label_set", pa.string()),
            ("dimension", pa.string()),
            ("scale", pa.string()),
            ("value", pa.float64()),
            ("n_raters", pa.int64()),
            *([("decision", pa.string())] if rows and "decision" in rows[0] else []),
        ]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _ci(pair: tuple[float, float]) -> str:
    lo, hi = pair
    return f"[{_num(lo)}, {_num(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else "–"


@dataclass(frozen=True)
class DatasetExport:
    folder: Path
    ratings: int
    raters: int
    items: int
    span_ratings: int
    label_set: str | None = None
    labels: int = 0


def card_header(title: str, label_set: str | None = None) -> str:
    """The card's YAML front matter (Hugging Face's dataset card metadata)."""
    configs: list[dict[str, Any]] = [
        {"config_name": "default", "data_files": [{"split": "train", "path": RATINGS_FILE}]}
    ]
    if label_set is not None:
        configs.append(
            {"config_name": "labels", "data_files": [{"split": "train", "path": LABELS_FILE}]}
        )
    meta = {"pretty_name": title, "configs": configs}
    body = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{body}---\n"


def _card_head(title: str) -> list[str]:
    return [
        f"# {markdown_text(title)}",
        "",
        "Human judgements of meaning preservation in text simplification, gathered with "
        "MeaningBench.",
        "",
    ]


def _protocol_lines(choice: ProtocolChoice, settings: AnnotationSettings) -> list[str]:
    lines = [
        "## Protocol",
        "",
        f"- **{choice.protocol}**: {choice.description}",
        f"- number on the slider: {'hidden' if choice.hidden_number else 'shown'}",
    ]
    if choice.protocol == "likert":
        lines.append(
            "- points: "
            + "; ".join(f"{i} = {markdown_text(t)}" for i, t in enumerate(choice.likert_labels, 1))
        )
    if choice.protocol == "esa":
        where = "output and source (omissions)" if choice.source_spans else "output"
        lines.append(f"- error spans (minor/major) marked in the {where}: {SPANS_FILE}")
    lines += [
        "",
        "## Instructions shown to raters",
        "",
        *(f"> {line}" if line else ">" for line in settings.guidelines.strip().splitlines()),
        "",
    ]
    return lines


def _rater_lines(
    rows: list[dict[str, Any]], raters: list[str], anonymous: int, items: int, dims: list[str]
) -> list[str]:
    lines = [
        "## Raters and ratings",
        "",
        f"- {counted(len(raters), 'named rater')}, {counted(anonymous, 'anonymous rating')}",
        f"- {counted(len(rows), 'rating')} of {counted(items, 'item')} on "
        f"{', '.join(map(markdown_text, dims)) or 'no dimension'}",
    ]
    for who in raters:
        n = sum(1 for r in rows if r["rater"] == who)
        lines.append(f"  - {markdown_text(who)}: {counted(n, 'rating')}")
    return lines


def _quality_lines(checks: list[RaterCheck]) -> list[str]:
    lines = ["", "## Quality control", ""]
    if checks:
        lines.append(
            "| rater | identical passed | unrelated passed | repeat MAD | agreement r | warnings |"
        )
        lines.append("|---|---|---|---|---|---|")
        for c in checks:
            lines.append(
                f"| {markdown_text(c.rater)} | {_num(c.identical_pass, '.0%')} "
                f"| {_num(c.unrelated_pass, '.0%')} "
                f"| {_num(c.repeat_mad, '.1f')} | {_num(c.agreement_r, '.2f')} "
                f"| {markdown_text('; '.join(c.warnings)) or 'none'} |"
            )
    else:
        lines.append("No named rater: no per-rater checks.")
    return lines


def _agreement_lines(agreement: AgreementResult | None) -> list[str]:
    lines = ["", "## Agreement", ""]
    if agreement is not None:
        pct = int(round(100 * agreement.confidence))
        lines += [
            f"| statistic | value | {pct}% CI |",
            "|---|---|---|",
            f"| Krippendorff's alpha (interval) | {_num(agreement.alpha)} | {_ci(agreement.alpha_ci)} |",
            f"| {agreement.icc_model} | {_num(agreement.icc)} | {_ci(agreement.icc_ci)} |",
            f"| Spearman-Brown split-half | {_num(agreement.spearman_brown)} "
            f"| {_ci(agreement.spearman_brown_ci)} |",
            f"| items rated twice or more | {agreement.n_items_multi} | |",
        ]
    return lines


def prefill_summary(rows: list[dict[str, Any]]) -> PrefillSummary:
    """What the raters made of pre-filled spans, over the rows of the span dimension."""

    def span(d: dict[str, Any]) -> Span:
        return Span(d["side"], d["start"], d["end"], d["severity"], d["text"])

    ratings = []
    for r in rows:
        spans = [span(d) for d in r["spans"]]
        made = {
            d["proposal"]: spans[k] for k, d in enumerate(r["spans"]) if d["proposal"] is not None
        }
        fates = [
            ProposalFate(
                ProposedSpan(span(p), p["model"], p["config_hash"], p["template"]), made.get(i)
            )
            for i, p in enumerate(r["proposals"])
        ]
        ratings.append((spans, fates))
    return summarise_fates(ratings)


def _pct(part: int, whole: int) -> str:
    return f"{part} ({part / whole:.0%})" if whole else str(part)


def _prefill_lines(summary: PrefillSummary) -> list[str]:
    """The card's account of the judge's pre-filled spans (ESA^AI)."""
    s = summary
    by = [
        f"{markdown_text(model)} with template {markdown_text(template)} (config {h[:10]})"
        for model, template, h in s.sources
    ]
    return [
        "",
        "## Pre-filled error spans",
        "",
        f"- proposed by: {'; '.join(by) or 'no proposal shown yet'}",
        f"- {counted(s.proposed, 'span')} proposed on {s.prefilled} of "
        f"{counted(s.ratings, 'rating')}: kept unchanged "
        f"{_pct(s.kept, s.proposed)}, edited {_pct(s.edited, s.proposed)}, deleted "
        f"{_pct(s.deleted, s.proposed)}",
        f"- share of model spans kept (unchanged or edited): {_num(s.kept_share, '.1%')}; "
        f"kept unchanged: {_num(s.unchanged_share, '.1%')}",
        f"- rater-added spans per item: {_num(s.added_per_item, '.2f')} "
        f"({counted(s.rater_added, 'span')} over {counted(s.ratings, 'rating')})",
    ]


def _files_lines(
    span_ratings: int, label_set: str | None, n_labels: int, decisions: bool = False
) -> list[str]:
    lines = [
        "",
        "## Files",
        "",
        f"- `{RATINGS_FILE}`: one row per rating (item_id, dataset, system, source, output, "
        "rater, rater_kind, dimension, scale, value, submitted_at, duration_ms, flagged, "
        "comment, display_position, spans (each with its origin: rater, kept or edited, and "
        "the index of its proposal), proposals (error spans a judge pre-filled, with model, "
        "config_hash, template and fate: kept, edited or deleted), and attributes: the item's "
        "categories, such as "
        "a sentence type, when the study has any). Hidden control items and practice "
        "answers are not included.",
    ]
    if span_ratings:
        lines.append(f"- `{SPANS_FILE}`: error spans, one line per rater and item.")
    if label_set is not None:
        lines.append(
            f"- `{LABELS_FILE}`: the {n_labels} aggregate labels of the label set "
            f"{markdown_text(label_set)} (item_id, dataset, system, source, output, label_set, "
            "dimension, scale, value, n_raters"
            + (
                ", decision: the lead's settling of the raters' disagreement: score (value is "
                "the adjudicated score), keep-all or exclude (value is the raters' mean)"
                if decisions
                else ""
            )
            + ")."
        )
    return lines


def export_dataset(
    study: Study,
    folder: Path,
    *,
    name: str | None = None,
    n_boot: int = 1000,
    labels: str | None = None,
) -> DatasetExport:
    """Write README.md (the card), ratings.parquet, for esa studies spans.jsonl and, with
    `labels` (a label set, resolved as every analysis resolves it), labels.parquet; all of
    them or none."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{folder}: not a folder; name a folder for the dataset")
    rows = rating_rows(study)
    label_set = None
    if labels is not None:
        with study.engine.connect() as conn:
            # A resolution set is read with the published labels; its own are written.
            label_set = resolve_label_sets(conn, labels)[0]
    labelled = label_rows(study, label_set) if label_set is not None else []
    with study.session() as s:
        settings = load_settings(s)
    choice = describe(settings)
    dims = sorted({r["dimension"] for r in rows})
    first = dims[0] if dims else "meaning"
    agreement = study_agreement(study, first, n_boot=n_boot) if rows else None
    checks = study_rater_checks(study, first) if rows else []
    raters = sorted({r["rater"] for r in rows if r["rater_kind"] == "named"})
    anonymous = sum(1 for r in rows if r["rater_kind"] == "anonymous")
    items = len({r["item_id"] for r in rows})
    title = name or Path(study.path).stem
    folder.parent.mkdir(parents=True, exist_ok=True)
    # The ratings that carry spans (esa: the first dimension), when spans were pre-filled.
    prefilled = settings.esa_prefill is not None or any(r["proposals"] for r in rows)
    span_rows = (
        [r for r in rows if r["dimension"] == first and r["rater_kind"] == "named"]
        if prefilled and settings.protocol == "esa"
        else []
    )
    with files_in_place(folder, replaces=(SPANS_FILE, LABELS_FILE)) as staging:
        write_parquet(rows, staging / RATINGS_FILE)
        span_ratings = 0
        if settings.protocol == "esa":
            span_ratings = export_spans(study, staging / SPANS_FILE)
        if label_set is not None:
            write_labels_parquet(labelled, staging / LABELS_FILE)
        lines = [
            *_card_head(title),
            *_protocol_lines(choice, settings),
            *_rater_lines(rows, raters, anonymous, items, dims),
            *_quality_lines(checks),
            *_agreement_lines(agreement),
            *(_prefill_lines(prefill_summary(span_rows)) if span_rows else []),
            *_files_lines(
                span_ratings, label_set, len(labelled), bool(labelled) and "decision" in labelled[0]
            ),
        ]
        card = card_header(title, label_set) + "\n" + "\n".join(lines) + "\n"
        (staging / CARD_FILE).write_text(card, encoding="utf-8")
    return DatasetExport(
        folder, len(rows), len(raters), items, span_ratings, label_set, len(labelled)
    )
