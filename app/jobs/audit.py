"""The label audit and its fix as background jobs (the Data quality panel runs them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from meaningbench.analysis.audit import DEFAULT_TOLERANCE, AuditResult, audit_study
from meaningbench.analysis.label_sets import (
    FixResult,
    LabelSet,
    add_fixed_labels,
    choose_label_set,
    label_sets,
    plan_fix,
    resolve_label_sets,
)
from meaningbench.db.study import open_study
from meaningbench.errors import UserError
from meaningbench.runtime import Job, JobContext


@dataclass(frozen=True)
class AuditView:
    """What the panel shows: the audit (None when there is nothing to audit, with why)."""

    result: AuditResult | None
    why_not: str
    sets: list[LabelSet]
    in_use: list[str]  # the label sets analyses read by default


def audit_job(
    path: Path, tolerance: float = DEFAULT_TOLERANCE, raters: list[str] | None = None
) -> Job[AuditView]:
    """The audit against the raw ratings of `raters` (None: those imported from files)."""

    def run(ctx: JobContext) -> AuditView:
        ctx.progress(0, None, "Auditing the labels", force=True)
        with open_study(path) as study, study.session() as session:
            sets = label_sets(session)
            in_use = resolve_label_sets(session)
            try:
                result: AuditResult | None = audit_study(
                    session, tolerance=tolerance, raters=raters
                )
                why = ""
            except UserError as exc:
                result, why = None, str(exc)
        return AuditView(result, why, sets, in_use)

    return run


def preview_fix_job(
    path: Path, name: str, keep_unmatched: bool, raters: list[str] | None = None
) -> Job[FixResult]:
    """What `fix_job` would write, without writing."""

    def run(ctx: JobContext) -> FixResult:
        with open_study(path) as study, study.session() as session:
            result = audit_study(session, raters=raters)
            return plan_fix(session, name, result, keep_unmatched=keep_unmatched).result

    return run


def fix_job(
    path: Path,
    name: str,
    keep_unmatched: bool,
    choose: bool,
    raters: list[str] | None = None,
    *,
    audit: AuditResult | None = None,
) -> Job[FixResult]:
    """Add the label set `name` from the raw ratings of `raters`, audited now, or from the
    `audit` already made (the command's, with its tolerance, scale and label sets)."""

    def run(ctx: JobContext) -> FixResult:
        with open_study(path) as study, study.session(write=True) as session:
            result = audit if audit is not None else audit_study(session, raters=raters)
            fixed = add_fixed_labels(session, name, result, keep_unmatched=keep_unmatched)
            if choose:
                choose_label_set(session, name)
        return fixed

    return run


def choose_job(path: Path, name: str | None) -> Job[None]:
    """Make `name` the label set analyses read by default (None: the published labels)."""

    def run(ctx: JobContext) -> None:
        with open_study(path) as study, study.session(write=True) as session:
            choose_label_set(session, name)

    return run
