"""`shards merge`: results scored elsewhere into the study, exactly once.

Every row of every result shard is checked before anything is written: the study id, the
metric and its config hash (against the metric as this study configures it now), the item
(it must exist) and the input hash (its texts must be the ones scored). One bad row refuses
the whole merge, with the file, row and column of each problem. Then one transaction writes
everything, through the scoring job's own storage rule (meaningbench.jobs.score_store): an
item whose current score is already there is left alone (merging twice adds nothing), a
stale or failed score is replaced, and each metric with new scores gets one `done` run.

Each row carries a checksum of its values (meaningbench.cluster.checksum): a row whose values
do not match it is a problem like any other. The results manifest says how many (item,
metric) pairs the export asked for: results that lack some (a lost file) are refused,
naming the export shards whose results are missing, unless the caller allows it
(`allow_missing`); then what is there is merged and each incomplete metric's run is closed
as `interrupted`, saying how many results were missing, so that `meaningbench score` (or
another export) completes it. A value or raw score that is NaN or infinite is stored as no
value, the rule of every score (meaningbench.jobs.score_store); the merge counts and names
those items.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meaningbench.db.engine import WaitPolicy
from meaningbench.db.models import MetricRun as RunRow
from meaningbench.db.models import utcnow
from meaningbench.db.runs import interrupt_gone_runs
from meaningbench.db.study_id import read_study_id
from meaningbench.db.writers import announced_writer
from meaningbench.errors import InputError
from meaningbench.jobs.metric_specs import plan_metric
from meaningbench.jobs.score_hashes import Hashes, collector_paused, prepare_metric
from meaningbench.jobs.score_store import (
    CacheState,
    check_cache,
    load_items,
    open_existing,
    raw_connection,
    registered_models,
    score_row_ids,
    store_scores,
)
from meaningbench.metrics.base import ItemScore, Metric
from meaningbench.metrics.names import parse_spec
from meaningbench.runtime import JobContext

from .checksum import row_checksum
from .layout import (
    ITEM_SHARD_GLOB,
    Manifest,
    ShardMetric,
    read_manifest,
    require_pyarrow,
    result_files,
)

# How many problems a refused merge lists (the count says how many more there were).
SHOWN_PROBLEMS = 20
COLUMNS = ("item_id", "metric", "config_hash", "input_hash", "value", "raw", "details", "error", "study_id", "checksum")  # fmt: skip
# How many items a message names (non-finite scores, shards without results).
SHOWN_ITEMS = 10


@dataclass
class MetricMerge:
    label: str
    written: int = 0  # scores written now
    current: int = 0  # already current in the study: left alone
    failed: int = 0  # of those written, error notes
    run_id: int | None = None
    expected: int | None = None  # (item, metric) pairs the export asked for; None: not known
    missing: int = 0  # of those, results the folder lacks (merged anyway: allow_missing)
    nonfinite: list[int] = field(default_factory=list)  # items scored NaN or ±inf


@dataclass
class MergeSummary:
    files: int = 0
    rows: int = 0
    metrics: list[MetricMerge] = field(default_factory=list)


class Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def add(self, text: str) -> None:
        self.count += 1
        if len(self.lines) < SHOWN_PROBLEMS:
            self.lines.append(text)

    def raise_if_any(self, outdir: Path) -> None:
        if not self.count:
            return
        more = self.count - len(self.lines)
        tail = f"\n… and {more} more" if more else ""
        raise InputError(
            f"{outdir}: {self.count} problem(s); nothing was merged:\n  "
            + "\n  ".join(self.lines)
            + tail
        )


@dataclass
class _Pending:
    entry: ShardMetric
    metric: Metric
    mode: str | None
    rows: dict[int, tuple[Any, ...]] = field(default_factory=dict)  # item id: result
    where: dict[int, str] = field(default_factory=dict)  # item id: "file row n"
    nonfinite: list[int] = field(default_factory=list)  # item ids with a NaN or ±inf score


def _study_metrics(
    study: Any, manifest: Manifest, hashes: Hashes, problems: Problems
) -> dict[str, _Pending]:
    """Each metric of the results as this study configures it now; a config hash that
    differs from the results' is a problem."""
    by_name = {r.name: r for r in registered_models(study)}
    out: dict[str, _Pending] = {}
    for entry in manifest.metrics:
        try:
            plan = plan_metric(parse_spec(entry.label), {}, by_name, check_availability=False)
        except InputError as exc:
            problems.add(f"{entry.label}: {exc}")
            continue
        metric = plan.metric
        assert metric is not None
        prepare_metric(metric, hashes)
        if metric.config_hash() != entry.config_hash:
            problems.add(
                f"{entry.label}: the results were scored with config hash {entry.config_hash}, "
                f"this study's {entry.label} has config hash {metric.config_hash()}"
            )
            continue
        out[entry.label] = _Pending(entry, metric, hashes.cache_key(metric).mode)
    return out


def _read_rows(
    files: Sequence[Path],
    manifest: Manifest,
    pending: dict[str, _Pending],
    expected: dict[str | None, dict[int, str]],
    problems: Problems,
    ctx: JobContext,
) -> int:
    """Check every row; keep one result per (metric, item)."""
    hashes_of = {e.label: e.config_hash for e in manifest.metrics}
    n_rows = 0
    for f_no, path in enumerate(files):
        ctx.check()
        ctx.progress(f_no, len(files), "Checking results")
        cols = _read_columns(path, problems)
        if cols is None:
            continue
        count = len(cols["metric"])
        n_rows += count
        for r in range(count):
            at = f"{path.name} row {r + 1}"
            row = {c: cols[c][r] for c in COLUMNS}
            problem = _row_problem(at, row, manifest, hashes_of, pending, expected)
            if problem is not None:
                if problem:
                    problems.add(problem)
                continue
            _keep_row(at, row, pending[row["metric"]], expected, problems)
    return n_rows


def _read_columns(path: Path, problems: Problems) -> dict[str, list[Any]] | None:
    """The result file's columns, or None (with the problem said) when it cannot be used."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:
        problems.add(
            f"{path}: not a complete Parquet file ({type(exc).__name__}); run "
            "`meaningbench shards score` again, which removes and redoes it"
        )
        return None
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing == ["checksum"]:
        problems.add(
            f"{path}: no column checksum (written by a version of meaningbench that did "
            "not check its results); score the export again into a new folder"
        )
        return None
    if missing:
        problems.add(f"{path}: no column {', '.join(missing)}")
        return None
    return {c: table.column(c).to_pylist() for c in COLUMNS}


def _row_problem(
    at: str,
    row: dict[str, Any],
    manifest: Manifest,
    hashes_of: dict[str, str],
    pending: dict[str, _Pending],
    expected: dict[str | None, dict[int, str]],
) -> str | None:
    """What is wrong with one result row; "" for a row of a metric refused as a whole."""
    label, item_id = row["metric"], row["item_id"]
    if row["study_id"] != manifest.study_id:
        return f"{at}, column study_id: {row['study_id']!r}, not this study's {manifest.study_id!r}"
    if label not in hashes_of:
        return f"{at}, column metric: {label!r} is not in the results' manifest"
    if row["config_hash"] != hashes_of[label]:
        return (
            f"{at}, column config_hash: {row['config_hash']!r}, but {label} has "
            f"config hash {hashes_of[label]!r}"
        )
    p = pending.get(label)
    if p is None:
        return ""  # its metric is refused as a whole
    want = expected[p.mode].get(item_id)
    if want is None:
        return f"{at}, column item_id: the study has no item {item_id}"
    if row["input_hash"] != want:
        return (
            f"{at}, column input_hash: item {item_id}'s texts changed since the "
            "export; export and score it again"
        )
    details = row["details"]
    if details is not None:
        try:
            if not isinstance(json.loads(details), dict):
                raise ValueError("not an object")
        except ValueError as exc:
            return f"{at}, column details: not a JSON object ({exc})"
    if row["checksum"] != row_checksum(row):
        return (
            f"{at}, column checksum: the row's values do not match its checksum (the "
            "file was changed after `meaningbench shards score` wrote it); score it again"
        )
    return None


def _keep_row(
    at: str,
    row: dict[str, Any],
    p: _Pending,
    expected: dict[str | None, dict[int, str]],
    problems: Problems,
) -> None:
    """Keep a checked row as its item's result; a second, different one is a problem."""
    item_id = row["item_id"]
    kept = (row["value"], row["raw"], row["details"], row["error"], expected[p.mode][item_id])
    before = p.rows.get(item_id)
    if before is None:
        p.rows[item_id] = kept
        p.where[item_id] = at
        if kept[3] is None and not all(_finite_or_none(x) for x in kept[:2]):
            p.nonfinite.append(item_id)
    elif not _same(before, kept):
        problems.add(
            f"{at}: a second, different result for item {item_id} {row['metric']} "
            f"(the first is {p.where[item_id]})"
        )


def _finite_or_none(x: Any) -> bool:
    return x is None or math.isfinite(x)


def _shards_without_results(manifest: Manifest, label: str, have: set[int]) -> list[str]:
    """The export's item shards holding items that need `label` and have no result, as
    "items-00001.parquet (300 items)"; empty when the export folder is gone."""
    import pyarrow.parquet as pq

    folder = Path(manifest.export) if manifest.export else None
    if folder is None or not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob(ITEM_SHARD_GLOB)):
        try:
            table = pq.read_table(path, columns=["item_id", "metrics"])
        except Exception:
            continue  # named by the count alone
        ids = table.column("item_id").to_pylist()
        needs = table.column("metrics").to_pylist()
        lacking = sum(
            1 for i, labels in zip(ids, needs, strict=True) if label in labels and i not in have
        )
        if lacking:
            out.append(f"{path.name} ({lacking:,} items)")
    return out


def _check_complete(
    outdir: Path,
    manifest: Manifest,
    pending: dict[str, _Pending],
    allow_missing: bool,
    problems: Problems,
    ctx: JobContext,
) -> dict[str, tuple[int, int]]:
    """Each metric's (expected, missing) results; a metric lacking results is a problem
    unless `allow_missing`, when it is said instead."""
    out: dict[str, tuple[int, int]] = {}
    for label, p in pending.items():
        expected = manifest.expected.get(label)
        if expected is None:
            continue  # results scored before manifests said: nothing to check against
        missing = max(0, expected - len(p.rows))
        out[label] = (expected, missing)
        if not missing:
            continue
        shards = _shards_without_results(manifest, label, set(p.rows))
        where = (
            f"; the results for {', '.join(shards[:SHOWN_ITEMS])} of the export are missing"
            if shards
            else ""
        )
        text = (
            f"{label}: {len(p.rows):,} results in {outdir}, the export asked for {expected:,}"
            f"{where}"
        )
        if allow_missing:
            ctx.notice(f"{text}; merging the {len(p.rows):,} there are (--allow-missing)")
        else:
            problems.add(
                f"{text}. Run `meaningbench shards score` on the export again (it scores "
                "what is missing), or merge what there is with --allow-missing"
            )
    return out


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    def norm(x: Any) -> Any:
        return "nan" if isinstance(x, float) and math.isnan(x) else x

    return [norm(x) for x in a] == [norm(x) for x in b]


def merge_results(
    study_path: Path, outdir: Path, ctx: JobContext, *, allow_missing: bool = False
) -> MergeSummary:
    require_pyarrow()
    manifest = read_manifest(outdir, "results")
    study = open_existing(study_path)
    study.set_wait_policy(WaitPolicy(notice=ctx.notice, check=ctx.cancel.check))
    try:
        sid = read_study_id(study)
        if sid != manifest.study_id:
            raise InputError(
                f"{outdir}: these results belong to study {manifest.study_id} (exported from "
                f"{manifest.study}); {study_path} is study {sid or '(never exported)'}; "
                "nothing was merged"
            )
        interrupt_gone_runs(study)
        problems = Problems()
        with collector_paused():
            items = load_items(study)
            hashes = Hashes(items)
            pending = _study_metrics(study, manifest, hashes, problems)
            modes = {p.mode for p in pending.values()}
            expected = {
                mode: dict(zip((it.id for it in items), hashes.get(mode)[1], strict=True))
                for mode in modes
            }
            files = result_files(outdir)
            summary = MergeSummary(files=len(files))
            summary.rows = _read_rows(files, manifest, pending, expected, problems, ctx)
            problems.raise_if_any(outdir)
            completeness = _check_complete(outdir, manifest, pending, allow_missing, problems, ctx)
            problems.raise_if_any(outdir)
            labels = list(pending)
            keys = [hashes.cache_key(pending[label].metric) for label in labels]
            states = dict(
                zip(labels, check_cache(study, keys, items, hashes.digests()), strict=True)
            )
        for label in labels:
            busy = [run_id for run_id, status in states[label].runs if status == "running"]
            if busy:
                problems.add(
                    f"{label}: another job is scoring it now (run {busy[0]}); merge when it is done"
                )
        problems.raise_if_any(outdir)
        _write(study, pending, states, completeness, summary, ctx)
        for m in summary.metrics:
            if m.nonfinite:
                ctx.notice(f"{m.label}: {describe_nonfinite(m.nonfinite)}")
        return summary
    finally:
        study.close()


def describe_nonfinite(items: Sequence[int]) -> str:
    shown = ", ".join(str(i) for i in items[:SHOWN_ITEMS])
    more = f" and {len(items) - SHOWN_ITEMS:,} more" if len(items) > SHOWN_ITEMS else ""
    return (
        f"{len(items):,} result(s) scored NaN or infinite (items {shown}{more}); stored as no value"
    )


def _check_runs_unchanged(raw: Any, p: _Pending, state: CacheState) -> None:
    """Refuse the merge when another job scored the metric since the cache check."""
    now = tuple(
        (int(r[0]), str(r[1]))
        for r in raw.execute(
            "SELECT id, status FROM metric_run WHERE metric = ? AND config_hash = ? ORDER BY id",
            (p.metric.name, p.entry.config_hash),
        )
    )
    if now != state.runs:
        raise InputError(
            f"{p.entry.label}: another job scored it while the results were checked; "
            "nothing was merged; merge again"
        )


def _run_status(merged: MetricMerge, scores: Sequence[ItemScore]) -> tuple[str, str | None]:
    """The merged run's status and message: failed when every result failed; interrupted
    when results the export asked for are missing (`meaningbench score` resumes such a run,
    scoring exactly the items still without a current score)."""
    if merged.failed == merged.written:
        return "failed", next(sc.error for sc in scores if sc.error is not None)
    if merged.missing:
        return "interrupted", (
            f"merged incomplete: {merged.missing:,} of the {merged.expected:,} results "
            "the export asked for were missing"
        )
    return "done", None


def _write(
    study: Any,
    pending: dict[str, _Pending],
    states: dict[str, CacheState],
    completeness: dict[str, tuple[int, int]],
    summary: MergeSummary,
    ctx: JobContext,
) -> None:
    """One transaction for the whole merge; the runs of each metric must still be what the
    cache check saw (another job scoring meanwhile makes the merge stop, unchanged)."""
    plans: list[tuple[_Pending, MetricMerge, list[int], dict[int, list[int]]]] = []
    for label, p in pending.items():
        state = states[label]
        current = state.current
        todo = sorted(i for i in p.rows if current is not None and i not in current)
        merged = MetricMerge(label, current=len(p.rows) - len(todo))
        merged.expected, merged.missing = completeness.get(label, (None, 0))
        merged.nonfinite = sorted(set(p.nonfinite) & set(todo))
        summary.metrics.append(merged)
        if todo:
            old = score_row_ids(study, p.metric.name, p.entry.config_hash) if state.runs else {}
            plans.append((p, merged, todo, old))
    if not plans:
        return
    ctx.progress(0, None, "Writing scores", force=True)
    with study.session(write=True) as s, announced_writer(study.path, "shards merge"):
        raw = raw_connection(s)
        for p, merged, todo, old in plans:
            _check_runs_unchanged(raw, p, states[p.entry.label])
            scores = [
                ItemScore(v, raw_v, json.loads(d) if d else {}, err)
                for v, raw_v, d, err, _ in (p.rows[i] for i in todo)
            ]
            merged.written = len(todo)
            merged.failed = sum(1 for sc in scores if sc.error is not None)
            status, error = _run_status(merged, scores)
            run = RunRow(
                metric=p.metric.name,
                config=dict(p.metric.config),
                config_hash=p.entry.config_hash,
                label=p.entry.label,
                model_id=p.metric.model_id(),
                device=p.entry.device,
                versions=dict(p.entry.versions or p.metric.versions()),
                status=status,
                started_at=utcnow(),
                finished_at=utcnow(),
                n_items=merged.written,
                n_failed=merged.failed,
                elapsed_s=0.0,
                error=error,
            )
            s.add(run)
            s.flush()
            merged.run_id = run.id
            replaced = [row for i in todo for row in old.get(i, ())]
            store_scores(
                s.connection(), run.id, todo, [p.rows[i][4] for i in todo], scores, replaced
            )
