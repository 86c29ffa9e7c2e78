"""What a shard folder holds: `manifest.json` (the study it came from and the metrics, each
with its config and config hash) and Parquet files.

An export folder holds item shards (`items-00000.parquet`, …): one row per item that still
needs a score from at least one metric, with its texts and, per metric it needs, the metric's
label, config hash and the input hash its score must carry. A results folder holds result
shards anywhere below it: one row per (item, metric) scored, with the value, the compact
details, the config hash, the input hash and the study id, so every row can be checked on
its own when it is merged.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meaningbench.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT = "meaningbench-shards/1"
MANIFEST = "manifest.json"
ITEM_SHARD_GLOB = "items-*.parquet"
DEFAULT_ROWS = 50_000
# What `pip install` needs for shards and for Ray: the engine with the cluster extra. A worker
# only scores, so it never needs the desktop app's extra (`app`: Qt).
EXTRA_HINT = "install the cluster extra: pip install 'meaningbench[cluster]'"


def require_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError(f"shards are Parquet files, which need pyarrow: {EXTRA_HINT}") from None


@dataclass(frozen=True)
class ShardMetric:
    """A metric as the shards carry it: enough to build it again anywhere."""

    label: str  # canonical spec (meaningbench.metrics.names)
    metric: str  # registry name
    config: dict[str, Any]
    config_hash: str
    reference_mode: str | None  # None: the metric reads no references
    batches_itself: bool  # a model: scored by an actor pool that loads it once
    model_name: str | None = None  # a model registered in the study (`NAME@MODEL`)
    versions: dict[str, str] = field(default_factory=dict)  # filled by the scorer
    device: str | None = None  # filled by the scorer

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ShardMetric:
        return cls(**data)


@dataclass
class Manifest:
    kind: str  # "items" or "results"
    study_id: str
    study: str  # the study's path when exported, for messages
    metrics: list[ShardMetric]
    items: int = 0  # item rows (items) or result rows (results) when written
    details: str = "full"  # results: the details mode they were scored with
    # Results: the export they were scored from, and how many (item, metric) pairs it asked
    # for, by metric label: a merge refuses results that lack some (a lost file).
    export: str = ""
    expected: dict[str, int] = field(default_factory=dict)
    format: str = FORMAT

    def metric(self, label: str) -> ShardMetric | None:
        return next((m for m in self.metrics if m.label == label), None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def write_manifest(folder: Path, manifest: Manifest) -> None:
    write_atomically(
        folder / MANIFEST,
        json.dumps(manifest.to_json(), indent=2, ensure_ascii=False).encode("utf-8"),
    )


def read_manifest(folder: Path, kind: str) -> Manifest:
    path = folder / MANIFEST
    if not path.exists():
        what = "an export (`meaningbench shards export`)" if kind == "items" else "results"
        raise InputError(f"{folder}: no {MANIFEST} here; this is not a folder of {what}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise InputError(
                f"{path}: format {data.get('format')!r}, this version reads {FORMAT!r}"
            )
        data["metrics"] = [ShardMetric.from_json(m) for m in data["metrics"]]
        manifest = Manifest(**data)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a shard manifest ({exc})") from exc
    if manifest.kind != kind:
        raise InputError(f"{path}: holds {manifest.kind}, not {kind}")
    return manifest


def write_atomically(path: Path, data: bytes) -> None:
    """Write a file under a temporary name and rename it: a killed writer leaves no half file
    under the real name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_table(path: Path, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def item_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("item_id", pa.int64()),
            ("source", pa.string()),
            ("output", pa.string()),
            ("references", pa.list_(pa.string())),
            ("system", pa.string()),
            ("metrics", pa.list_(pa.string())),  # labels of the metrics it needs
            ("config_hashes", pa.list_(pa.string())),  # parallel to metrics
            ("input_hashes", pa.list_(pa.string())),  # parallel to metrics
        ]
    )


def result_schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [
            ("item_id", pa.int64()),
            ("metric", pa.string()),  # label
            ("config_hash", pa.string()),
            ("input_hash", pa.string()),
            ("value", pa.float64()),
            ("raw", pa.float64()),
            ("details", pa.string()),  # JSON, as the details mode left it
            ("error", pa.string()),
            ("study_id", pa.string()),
            ("checksum", pa.string()),  # of the other columns (meaningbench.cluster.checksum)
        ]
    )


def result_files(folder: Path) -> list[Path]:
    """Every result shard below a results folder (Ray writes them into subfolders)."""
    return sorted(p for p in folder.rglob("*.parquet") if not p.name.startswith("."))
