"""Named protocols of the metric literature: what `metaeval --preset` runs, and what the
dashboard's Which metric tab sets when one is chosen. One definition for both.

wmt25: the WMT25 metrics task as MTME (github.com/google-research/mt-metrics-eval,
`tasks.WMT25`) runs it per language pair: SPA ('pce') at system level, ranked by MTME's
permutation test, and acc*_eq ('KendallWithTiesOpt', variant acc23, sample_rate 1.0) per
item with `perm_test='pairs'`; k = 1,000 with early stopping (block 100, stop at p < 0.02
or p > 0.50). The segment-level task is the one a study of rated outputs is about: the
tab ranks by it and the human rows are measured on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from meaningbench.analysis.metaeval_pairs import EarlyStop


@dataclass(frozen=True)
class PresetTask:
    """One ranking of a preset: the measure, the grouping and the paired test."""

    measure: str
    group_by: str
    test: str


@dataclass(frozen=True)
class Preset:
    name: str
    tasks: tuple[PresetTask, ...]
    source: str  # what the methods paragraph says the preset is
    early_stop: EarlyStop | None = None
    intervals: bool = False  # bootstrap intervals beside the ranking

    @property
    def segment_task(self) -> PresetTask:
        """The task on outputs (the last): the tab's ranking and the human rows'."""
        return self.tasks[-1]


WMT25 = Preset(
    name="wmt25",
    tasks=(PresetTask("spa", "system", "perm-outputs"), PresetTask("acc_eq_star", "item", "pairs")),
    source="the WMT25 metrics task's protocol as MTME (github.com/google-research/mt-metrics-eval, "
    "tasks.WMT25) runs it: soft pairwise accuracy at system level and tie-calibrated "
    "pairwise accuracy per source with the pairwise permutation test, both with MTME's "
    "early stopping",
    early_stop=EarlyStop(),
)
PRESETS = {WMT25.name: WMT25}
