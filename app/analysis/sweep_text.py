"""The sweep table as the terminal prints it."""

from __future__ import annotations

import math

from meaningbench.analysis.sweep_table import SweepRow, SweepTable


def _num(value: float, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else "–"


def _with_ci(value: float, ci: tuple[float, float]) -> str:
    if not math.isfinite(value):
        return "–"
    if not all(math.isfinite(v) for v in ci):
        return _num(value)
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _cells(row: SweepRow) -> list[str]:
    e = row.entry
    mark = "best" if row.best else ("2nd" if row.runner_up else "")
    if row.cluster is not None:
        mark = f"{row.cluster} {mark}".rstrip()
    if row.note:
        return [e.model, e.metric, str(e.layer), e.variant, "–", row.note, "", "", "", "", ""]
    return [
        e.model, e.metric, str(e.layer), e.variant, str(row.n),
        _with_ci(row.pearson, row.pearson_ci), _with_ci(row.spearman, row.spearman_ci),
        _with_ci(row.kendall, row.kendall_ci), _num(row.rmse), _num(row.mae), mark,
    ]  # fmt: skip


HEADER = ["model", "metric", "layer", "variant", "n", "Pearson [CI]", "Spearman [CI]",
          "Kendall [CI]", "RMSE", "MAE", "cluster"]  # fmt: skip


def table_text(table: SweepTable) -> str:
    rows = [HEADER] + [_cells(r) for r in table.rows]
    widths = [max(len(r[i]) for r in rows if len(r) > i) for i in range(len(HEADER))]
    lines = [
        f"{table.dimension}: {table.n_items} rated items, {table.n_boot} bootstrap resamples, "
        f"{int(table.confidence * 100)}% intervals",
    ]
    for cells in rows:
        line = "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False))
        lines.append(line.rstrip())
    lines.append(table.scale_note)
    best, second, test = table.best, table.runner_up, table.comparison
    if best is not None:
        e = best.entry
        lines.append(f"best by {table.rank_by}: {e.column} ({e.variant}, layer {e.layer})")
    if table.ranking is not None and table.n_boot > 0:
        r = table.ranking
        lines.append(
            f"clusters: configurations not significantly different share a number (PERM-BOTH, "
            f"{r.resamples} resamples, seed {r.seed}, α {r.alpha:g}, on the {r.n_outputs} items "
            "every configuration scored)"
        )
    if second is not None and test is not None:
        verdict = "better" if test.significant else "not significantly better"
        lines.append(
            f"best vs runner-up ({second.entry.column}): {test.statistic} "
            f"{test.best:.3f} vs {test.runner_up:.3f} on {test.n} items; Williams t = "
            f"{_num(test.williams_t, 2)}, one-sided p = {_num(test.williams_p, 4)}; paired "
            f"bootstrap difference {_with_ci(test.best - test.runner_up, test.difference_ci)}, "
            f"p = {_num(test.bootstrap_p, 4)}: {verdict}"
        )
    return "\n".join(lines)
