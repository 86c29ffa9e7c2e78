"""The model card: what a trained model learned from, how, and how well it did (JSON + Markdown).

The JSON card is stored with the registered model in the study, so the battery and the
dashboard can say which items the model was trained on (its test source groups are the
only items where its correlation with humans is an honest figure).
"""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from meaningbench.core.json_values import clean_json
from meaningbench.training.request import BETWEEN_EXACT

CARD_FORMAT = "meaningbench-model-card/1"
CARD_JSON = "model_card.json"
CARD_MD = "README.md"


def library_versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for dist in ("meaningbench", "torch", "transformers", "tokenizers", "numpy", "scipy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def write_card(card: dict[str, Any], out_dir: Path) -> None:
    clean = clean_json(card)
    for name, text in (
        (CARD_JSON, json.dumps(clean, indent=2, ensure_ascii=False) + "\n"),
        (CARD_MD, render_markdown(clean)),
    ):
        path = out_dir / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)


def read_card(out_dir: Path) -> dict[str, Any] | None:
    try:
        card: dict[str, Any] = json.loads((out_dir / CARD_JSON).read_text(encoding="utf-8"))
        return card
    except (OSError, ValueError):
        return None


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _stats_rows(stats: dict[str, Any]) -> list[str]:
    rows = ["| statistic | value |", "|---|---|"]
    for key in ("n", "pearson", "spearman", "kendall", "r2", "rmse"):
        if key in stats:
            extra = ""
            if f"{key}_sd" in stats and stats[f"{key}_sd"] is not None:
                extra = f" ± {_fmt(stats[f'{key}_sd'])}"
            ci = stats.get(f"{key}_ci")
            if isinstance(ci, list) and len(ci) == 2 and None not in ci:
                extra += f" (95% CI {_fmt(ci[0])} – {_fmt(ci[1])})"
            rows.append(f"| {key} | {_fmt(stats[key])}{extra} |")
    return rows


def _metrics(card: dict[str, Any]) -> list[str]:
    metrics = card.get("metrics")
    return [str(m) for m in metrics] if isinstance(metrics, list) else [str(card.get("metric"))]


def _mapping_lines(mapping: Any) -> list[str]:
    if not isinstance(mapping, dict):
        return []
    if mapping.get("kind") != "table":
        return [f"- Rating mapping: linear ({mapping.get('rule', '')})"]
    rows = ", ".join(f"{r['score']:g} → {r['target']:g}" for r in mapping.get("table", []))
    from meaningbench.training.labels import describe_between

    # Cards written before the choice existed have no "between": their tables were exact.
    rule = describe_between(str(mapping.get("between", BETWEEN_EXACT)))
    return [f"- Rating mapping (label map `{mapping.get('text')}`, {rule}): {rows}"]


def _augmentation_lines(augmentation: Any) -> list[str]:
    if not isinstance(augmentation, dict):
        return []
    kinds = ", ".join(augmentation.get("augment") or []) or "none"
    share = augmentation.get("sanity_share")
    if not {"identical", "unrelated"} & set(augmentation.get("augment") or []):
        rule = "no identical or unrelated pairs"
    elif isinstance(share, list) and len(share) == 2:
        rule = f"sanity shares: identical {_fmt(share[0], 2)}, unrelated {_fmt(share[1], 2)}"
    else:
        rule = "one identical and one unrelated pair per source"
    shares = (augmentation.get("train") or {}).get("shares") or {}
    parts = ", ".join(
        f"{key} {100 * shares[key]:.1f} %"
        for key in ("identical", "unrelated", "swapped", "augmented")
        if isinstance(shares.get(key), (int, float))
    )
    return [f"- Augmentation: {kinds} ({rule}); training examples: {parts}"]


def _before_after_rows(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    rows = ["| statistic | before | after |", "|---|---|---|"]
    for key in ("n", "pearson", "spearman", "kendall", "r2", "rmse"):
        if key in before or key in after:
            rows.append(f"| {key} | {_fmt(before.get(key))} | {_fmt(after.get(key))} |")
    return rows


def render_markdown(card: dict[str, Any]) -> str:
    lines = _summary_lines(card)
    lines += _test_lines(card)
    lines += _sanity_lines(card.get("sanity") or {})
    lines += _split_lines(card.get("split", {}).get("parts", {}))
    lines += _curve_lines(card.get("curve") or [])
    lines += ["## Configuration", "", "```json", json.dumps(card.get("config", {}), indent=2)]
    lines += ["```", ""]
    lines += ["## Versions", "", *(f"- {k} {v}" for k, v in card.get("versions", {}).items()), ""]
    return "\n".join(lines)


def _summary_lines(card: dict[str, Any]) -> list[str]:
    """The title, what the model is and what it was trained on."""
    data = card.get("data", {})
    split = card.get("split", {})
    return [
        f"# {card.get('name', 'model')}",
        "",
        str(
            card.get("description")
            or "A MeaningBERT-style cross-encoder (one regression output; the logit is a 0–100 "
            "meaning-preservation score for a (source, output) pair)"
        )
        + " trained with MeaningBench.",
        "",
        "- Battery metrics: " + ", ".join(f"`{m}@{card.get('name')}`" for m in _metrics(card)),
        f"- Base encoder: `{card.get('base_model')}`",
        f"- Study: `{card.get('study')}`, dimension `{data.get('dimension')}`, target "
        f"{data.get('target')}",
        f"- Data: {data.get('n_items')} rated items in {data.get('n_groups')} source groups, "
        f"{data.get('n_ratings')} ratings by {data.get('n_annotators')} annotators; "
        f"hash `{str(data.get('hash', ''))[:16]}`",
        *_mapping_lines(card.get("mapping")),
        *_augmentation_lines(card.get("augmentation")),
        f"- Split: {split.get('kind')} (seed {split.get('seed')})",
        f"- Selected run: `{card.get('selected_run')}`; device {card.get('device')}; "
        f"{_fmt(card.get('elapsed_s'), 0)} s",
        "",
    ]


def _test_lines(card: dict[str, Any]) -> list[str]:
    """The held-out test figures, before and after training and over runs where known."""
    lines = [
        "## Test figures",
        "",
        str(card.get("test_note", "")),
        "",
        *_stats_rows(card.get("test", {})),
        "",
    ]
    if card.get("test_before"):
        lines += [
            "Before and after training, on the same held-out items (the base encoder's "
            "zero-shot cosine, then the trained model's):",
            "",
            *_before_after_rows(card["test_before"], card.get("test", {})),
            "",
        ]
    if card.get("test_over_runs"):
        lines += ["Mean ± SD over runs:", "", *_stats_rows(card["test_over_runs"]), ""]
    return lines


def _sanity_lines(sanity: dict[str, Any]) -> list[str]:
    """The identical and unrelated controls' pass shares."""
    if not sanity.get("identical"):
        return []
    ident = sanity.get("identical", {})
    unrel = sanity.get("unrelated", {})
    return [
        f"## Sanity checks ({sanity.get('n')} held-out sources; share of pairs passing)",
        "",
        "| identical: round(score) | ≥ 95 | ≥ 96 | ≥ 97 | ≥ 98 | ≥ 99 | = 100 |",
        "|---|---|---|---|---|---|---|",
        "| share | "
        + " | ".join(_fmt(ident.get(k), 2) for k in ("95", "96", "97", "98", "99", "100"))
        + " |",
        "",
        "| unrelated (word soup): round(score) | ≤ 5 | ≤ 4 | ≤ 3 | ≤ 2 | ≤ 1 | = 0 |",
        "|---|---|---|---|---|---|---|",
        "| share | "
        + " | ".join(_fmt(unrel.get(k), 2) for k in ("5", "4", "3", "2", "1", "0"))
        + " |",
        "",
        f"Mean score of identical pairs {_fmt(sanity.get('identical_mean'), 1)}, "
        f"of unrelated pairs {_fmt(sanity.get('unrelated_mean'), 1)}.",
        "",
    ]


def _split_lines(parts: dict[str, Any]) -> list[str]:
    if not parts:
        return []
    lines = ["## Split", "", "| part | groups | items | examples |", "|---|---|---|---|"]
    for name, part in parts.items():
        lines.append(
            f"| {name} | {part.get('groups')} | {part.get('items')} | {part.get('examples', '–')} |"
        )
    lines.append("")
    return lines


def _curve_lines(curve: list[dict[str, Any]]) -> list[str]:
    if not curve:
        return []
    lines = [
        "## Training curve (MSE on the 0–100 scale)",
        "",
        "| step | epoch | train | validation |",
        "|---|---|---|---|",
    ]
    for point in curve:
        lines.append(
            f"| {point.get('step')} | {_fmt(point.get('epoch'), 2)} | "
            f"{_fmt(point.get('train_loss'), 1)} | {_fmt(point.get('val_loss'), 1)} |"
        )
    lines.append("")
    return lines
