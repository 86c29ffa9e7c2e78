"""A sweep table as a real sweep of one encoder makes it: three layers, two idf variants
and SBERT cosine, the best and the runner-up marked (the page's layout tests show it)."""

from __future__ import annotations

import dataclasses

from meaningbench.analysis.sweep_table import SweepEntry, SweepRow, SweepTable

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def sweep_table() -> SweepTable:
    rows = []
    k = 0
    for metric, variants in (
        ("bertscore", ("idf: none, raw", "idf: sources, raw")),
        ("sbert_cosine", ("mean pooling",)),
    ):
        for variant in variants:
            for layer in (1, 2, 3):
                r = 0.42 + 0.03 * layer + 0.02 * k  # the best is the last row
                rows.append(
                    SweepRow(
                        SweepEntry(MODEL, metric, layer, variant, f"{metric}[{layer}]"),
                        n=299,
                        pearson=r,
                        pearson_ci=(r - 0.081, r + 0.074),
                        spearman=r - 0.01,
                        spearman_ci=(r - 0.094, r + 0.079),
                        kendall=r - 0.12,
                        kendall_ci=(r - 0.181, r - 0.064),
                        rmse=0.231,
                        mae=0.187,
                    )
                )
            k += 1
    by_pearson = sorted(range(len(rows)), key=lambda i: rows[i].pearson)
    rows[by_pearson[-1]] = dataclasses.replace(rows[by_pearson[-1]], best=True)
    rows[by_pearson[-2]] = dataclasses.replace(rows[by_pearson[-2]], runner_up=True)
    return SweepTable(rows=rows, dimension="meaning", n_items=299, n_boot=1000, rank_by="pearson")
