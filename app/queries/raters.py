"""How the screens name a study's machine raters (`meaningbench judge --as-rater`).

A machine rater's ratings are a model's, shown beside the people's and never part of an
item's human score (`meaningbench.analysis.human`). The screens mark them with one tag and
a tooltip naming the judge and its model, both written here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from meaningbench.analysis.human import KINDS, MACHINE
from meaningbench.analysis.rater_checks import RaterCheck
from meaningbench.analysis.score_columns import runs_frame
from meaningbench.db.study import Study

__all__ = [
    "MACHINE_KIND",
    "MACHINE_MARK",
    "MACHINE_TAG",
    "RATER_CHOICES",
    "MachineRater",
    "RaterCheck",
    "judge_and_model",
    "machine_raters",
    "machine_columns",
    "machine_raters_frame",
    "machine_tooltip",
    "rater_kind_sql",
]

MACHINE_KIND = KINDS[MACHINE]  # the annotator kind of a machine rater
MACHINE_TAG = "machine"  # the word beside a machine rater's name
MACHINE_MARK = "⚙"  # the sign of machine ratings where there is no room for the word
# The rater filter of the browser: whose ratings count for "Rated", "Unrated" and the
# Ratings column.
RATER_CHOICES = ("all", "people", "machine")


@dataclass(frozen=True)
class MachineRater:
    name: str
    judge: str | None  # the metric spec it ran (`llm_judge[model=…]`)
    model: str | None  # the model's id as the scoring run recorded it

    @property
    def tooltip(self) -> str:
        return machine_tooltip(self.name, self.judge, self.model)


def machine_tooltip(name: str, judge: str | None, model: str | None) -> str:
    """What a machine mark says on hover: which judge and model, and that it is no human."""
    made_by = ", ".join(x for x in (judge, f"model {model}" if model else None) if x)
    lines = [f"{name}: a machine rater" + (f" ({made_by})" if made_by else "")]
    lines.append("Its ratings are a model's: never part of an item's human score.")
    return "\n".join(lines)


def judge_and_model(meta: Any) -> tuple[str | None, str | None]:
    """(judge spec, model id) from an annotator's meta (JSON text or a dict)."""
    if isinstance(meta, str):
        try:
            meta = json.loads(meta)
        except ValueError:
            meta = None
    if not isinstance(meta, dict):
        return None, None
    judge, model = meta.get("judge"), meta.get("model")
    return (str(judge) if judge else None), (str(model) if model else None)


def machine_raters(conn: sqlite3.Connection) -> list[MachineRater]:
    """The study's machine raters, by name."""
    rows = conn.execute(
        "SELECT name, meta FROM annotator WHERE kind = ? ORDER BY name", (MACHINE_KIND,)
    ).fetchall()
    return [MachineRater(str(name), *judge_and_model(meta)) for name, meta in rows]


def rater_kind_sql(raters: str, alias: str = "r") -> str:
    """An SQL condition on `rating {alias}` keeping the ratings of `raters` (RATER_CHOICES)."""
    if raters not in RATER_CHOICES:
        raise ValueError(f"raters must be one of {RATER_CHOICES}, not {raters!r}")
    if raters == "all":
        return "1=1"
    machine_ids = f"SELECT id FROM annotator WHERE kind = '{MACHINE_KIND}'"
    negation = "" if raters == "machine" else "NOT "
    return f"{alias}.annotator_id {negation}IN ({machine_ids})"


MACHINE_COLUMNS = (
    "ratings",
    "r",
    "n",
    "alpha_with",
    "alpha_without",
    "identical_pass",
    "unrelated_pass",
)


def machine_raters_frame(
    checks: list[RaterCheck], alphas: dict[str, dict[str, float]]
) -> pd.DataFrame:
    """One row per machine rater, as `raters` and `agreement` print them: its ratings, its r
    with the raters' mean (n items), alpha with and without it, and its control pass rates.

    `checks`: `analysis.rater_checks` (machine ones are kept); `alphas`:
    `AgreementResult.machine`."""
    rows = []
    for c in (c for c in checks if c.machine):
        alpha = alphas.get(c.rater, {})
        rows.append(
            {
                "rater": c.rater,
                "ratings": c.n_ratings,
                "r": c.agreement_r,
                "n": c.agreement_n,
                "alpha_with": alpha.get("alpha_with", float("nan")),
                "alpha_without": alpha.get("alpha_without", float("nan")),
                "identical_pass": c.identical_pass,
                "unrelated_pass": c.unrelated_pass,
            }
        )
    frame = pd.DataFrame(rows, columns=["rater", *MACHINE_COLUMNS])
    return frame.set_index("rater")


def machine_columns(study: Study, among: Iterable[str] | None = None) -> dict[str, list[str]]:
    """Score column → the machine raters whose ratings are that run's scores: a judge run
    with `--as-rater` is both a metric (ranked against the humans) and a machine rater
    (whose ratings never make the human score it is ranked against). `among`: only these
    columns (the metrics an analysis holds)."""
    with study.engine.connect() as conn:
        rows = conn.exec_driver_sql(
            "SELECT name, json_extract(meta, '$.config_hash') FROM annotator "
            "WHERE kind = ? ORDER BY name",
            (MACHINE_KIND,),
        ).fetchall()
        if not rows:
            return {}
        runs = runs_frame(conn)
    column = dict(zip(runs["config_hash"].astype(str), runs["column"].astype(str), strict=True))
    wanted = None if among is None else set(among)
    out: dict[str, list[str]] = {}
    for name, config_hash in rows:
        shown = column.get(str(config_hash))
        if shown is not None and (wanted is None or shown in wanted):
            out.setdefault(shown, []).append(str(name))
    return out
