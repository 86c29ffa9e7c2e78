"""Scoring beyond one machine through the ops, on real study files and real shards: an
export gives the study its id, the shards scored here and merged back hold the scores the
battery writes, merging twice adds nothing, results of another study or with a file lost are
refused whole, and shards scored on Ray (a local instance) are those scored here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pyarrow", reason="the shard ops need pyarrow: pip install 'meaningbench[cluster]'"
)

from meaningbench.cluster.export import ExportSummary  # noqa: E402
from meaningbench.cluster.layout import result_files  # noqa: E402
from meaningbench.cluster.work import Work, plan_work  # noqa: E402
from meaningbench.db.study import copy_study  # noqa: E402
from meaningbench.errors import InputError  # noqa: E402
from meaningbench.ops.score import score_job  # noqa: E402
from meaningbench.ops.shards import (  # noqa: E402
    export_shards_job,
    merge_shards_job,
    score_shards_job,
    score_with_ray_job,
)
from meaningbench.runtime import JobContext  # noqa: E402
from tests.cluster.helpers import local_ray, make_study, query, scores, table_dump  # noqa: E402

METRICS = ["bleu", "compression"]
N = 30
ROWS = 10  # items per shard: three shards, and three result files from the local executor
STUDY_ID = "SELECT value FROM study_setting WHERE key = 'study_id'"


def _export(study: Path, folder: Path) -> ExportSummary:
    return export_shards_job(study, folder, METRICS, rows_per_shard=ROWS)(JobContext()).value


def _score(indir: Path, outdir: Path, **how: Any) -> tuple[int, Work]:
    work, manifest = plan_work(indir, outdir, ["all"], "full")
    return score_shards_job(work, manifest, **how)(JobContext()), work


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path]:
    """A study of N unscored items, exported; its shards scored here (the results' folder)."""
    study = make_study(tmp_path / "study.mbstudy", N)
    _export(study, tmp_path / "in")
    scored, _ = _score(tmp_path / "in", tmp_path / "out")
    assert scored == N * len(METRICS)
    return study, tmp_path / "out"


def test_an_export_writes_the_missing_items_and_gives_the_study_its_id(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study.mbstudy", N)
    assert query(study, STUDY_ID) == []
    wrote = export_shards_job(study, tmp_path / "in", METRICS, rows_per_shard=ROWS)(JobContext())
    summary = wrote.value
    assert (summary.items, summary.shards) == (N, 3)
    assert sorted(summary.to_score.values()) == [N, N]
    assert set(summary.current.values()) == {0}
    ((stored,),) = query(study, STUDY_ID)
    assert json.loads(stored) == summary.study_id and wrote.changes.settings
    # Exported again, the study keeps its id.
    assert _export(study, tmp_path / "again").study_id == summary.study_id


def test_merged_shards_hold_the_batterys_scores_and_merging_twice_adds_nothing(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    study, out = exported
    battery = copy_study(study, tmp_path / "battery.mbstudy")
    score_job(JobContext(), battery, list(METRICS), {"workers": 1})

    wrote = merge_shards_job(study, out)(JobContext())
    assert wrote.changes.everything and wrote.changes.runs
    assert wrote.value.files == 3 and wrote.value.rows == N * len(METRICS)
    assert [(m.written, m.current) for m in wrote.value.metrics] == [(N, 0)] * len(METRICS)
    expected = scores(battery)
    assert len(expected) == N * len(METRICS) and scores(study) == expected

    before = table_dump(study)
    again = merge_shards_job(study, out)(JobContext())
    assert [(m.written, m.current) for m in again.value.metrics] == [(0, N)] * len(METRICS)
    assert not again.changes and table_dump(study) == before


def test_a_second_score_run_scores_only_what_a_lost_file_held(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    _, out = exported
    assert _score(tmp_path / "in", out)[0] == 0  # everything is there
    first = result_files(out)[0]
    import pyarrow.parquet as pq

    lost = pq.read_table(first).num_rows
    first.unlink()
    scored, work = _score(tmp_path / "in", out)
    assert scored == lost and sum(work.done.values()) == N * len(METRICS) - lost


def test_results_of_another_study_are_refused_and_nothing_is_written(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    _, out = exported
    other = make_study(tmp_path / "other.mbstudy", N)
    before = table_dump(other)
    with pytest.raises(InputError, match="these results belong to study"):
        merge_shards_job(other, out)(JobContext())
    assert table_dump(other) == before


def test_a_lost_result_file_refuses_the_merge_unless_missing_results_are_allowed(
    exported: tuple[Path, Path],
) -> None:
    study, out = exported
    result_files(out)[0].unlink()  # one shard's ten items, for both metrics
    before = table_dump(study)
    with pytest.raises(InputError, match="nothing was merged"):
        merge_shards_job(study, out)(JobContext())
    assert table_dump(study) == before

    merged = merge_shards_job(study, out, allow_missing=True)(JobContext()).value
    assert [(m.written, m.missing) for m in merged.metrics] == [(N - ROWS, ROWS)] * len(METRICS)
    statuses = query(study, "SELECT status FROM metric_run")
    assert statuses == [("interrupted",)] * len(METRICS)  # `meaningbench score` completes them


@pytest.fixture(scope="module")
def ray_instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local Ray instance for the module (2 CPUs, bound to 127.0.0.1, no dashboard)."""
    pytest.importorskip(
        "ray", reason="scoring on Ray needs Ray Data: pip install 'meaningbench[cluster]'"
    )
    with local_ray(tmp_path_factory.mktemp("mbhome-ray-workers")) as address:
        yield address


def test_shards_scored_on_ray_are_those_scored_here(ray_instance: str, tmp_path: Path) -> None:
    study = make_study(tmp_path / "study.mbstudy", N)
    # One shard: Ray Data lists several files on threads of its own, each importing fsspec's
    # HTTP filesystem, and without aiohttp those imports race (seen: "cannot import name
    # HTTPFileSystem"). `meaningbench score --executor ray` exports one shard too.
    export_shards_job(study, tmp_path / "in", METRICS)(JobContext())
    twin = copy_study(study, tmp_path / "twin.mbstudy")  # the same study id
    assert _score(tmp_path / "in", tmp_path / "here")[0] == N * len(METRICS)
    scored, _ = _score(
        tmp_path / "in", tmp_path / "ray", executor="ray", address=ray_instance, show_progress=False
    )
    assert scored == N * len(METRICS)
    merge_shards_job(study, tmp_path / "here")(JobContext())
    merge_shards_job(twin, tmp_path / "ray")(JobContext())
    assert scores(twin) == scores(study) and len(scores(study)) == N * len(METRICS)
    # Written by Ray Data's tasks, not by this process.
    folders = {p.relative_to(tmp_path / "ray").parts[0] for p in result_files(tmp_path / "ray")}
    assert folders and all(f.startswith("ray-") for f in folders)


def test_score_with_ray_in_one_step(ray_instance: str, tmp_path: Path) -> None:
    study = make_study(tmp_path / "study.mbstudy", N)
    battery = copy_study(study, tmp_path / "battery.mbstudy")
    score_job(JobContext(), battery, list(METRICS), {"workers": 1})
    # Ray is running already (the module's instance): the job scores there.
    wrote = score_with_ray_job(study, [",".join(METRICS)], show_progress=False)(JobContext())
    summary = wrote.value
    assert summary.exported.items == N and summary.scored == N * len(METRICS)
    assert summary.merged is not None and wrote.changes.everything
    assert [m.written for m in summary.merged.metrics] == [N] * len(METRICS)
    assert scores(study) == scores(battery)
    assert not study.with_name(f"{study.name}.shards").exists()
    # Every score current: nothing to do, and the work folder is not left behind.
    again = score_with_ray_job(study, METRICS, show_progress=False)(JobContext())
    assert again.value.merged is None and again.value.exported.items == 0
    assert not study.with_name(f"{study.name}.shards").exists()
