"""Studies for the shard tests, and what their score tables hold."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from meaningbench.db.study import create_study
from tests.jobs.conftest import make_rows
from tests.jobs.studydata import add_items

# The lexical battery as `meaningbench score` runs it (METEOR aside: the slowest by far).
BATTERY = [
    "bleu", "chrf", "ter", "rouge1", "rouge2", "rougel", "sari",
    "ibleu", "fkbleu", "fkgl", "compression", "edit_similarity",
]  # fmt: skip

ScoreKey = tuple[str, str, int]  # label, config hash, item id


def make_study(path: Path, n: int) -> Path:
    """A study of `n` items, each with two human references."""
    study = create_study(path)
    add_items(study, make_rows(n, with_refs=True))
    study.close()
    return path


def query(path: Path, sql: str) -> list[tuple]:
    """The rows of a query on a study, read-only."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def scores(path: Path) -> dict[ScoreKey, tuple]:
    """Every score row by (label, config hash, item): value, raw, details, error, input hash.
    Two rows for one key would be a duplicate: it fails here."""
    out: dict[ScoreKey, tuple] = {}
    for label, config_hash, item_id, *rest in query(
        path,
        "SELECT r.label, r.config_hash, s.item_id, s.value, s.raw, s.details, s.error, "
        "s.input_hash FROM score s JOIN metric_run r ON r.id = s.run_id",
    ):
        key = (label, config_hash, item_id)
        assert key not in out, f"two scores for {key}"
        out[key] = tuple(rest)
    return out


def table_dump(path: Path) -> tuple[list[tuple], list[tuple]]:
    """The score and metric_run tables as they are, for "nothing changed" checks."""
    return (
        query(path, "SELECT * FROM score ORDER BY id"),
        query(path, "SELECT * FROM metric_run ORDER BY id"),
    )


@contextmanager
def local_ray(workers_home: Path) -> Iterator[str]:
    """A local Ray instance (2 CPUs, bound to 127.0.0.1, no dashboard) whose workers keep
    their data folder in `workers_home`; yields its address."""
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        object_store_memory=200 * 1024 * 1024,
        log_to_driver=False,
        runtime_env={"env_vars": {"MEANINGBENCH_HOME": str(workers_home)}},
    )
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
