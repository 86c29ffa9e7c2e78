"""Scoring shards on a local Ray instance: the lexical battery as stateless tasks and
BERTScore (MiniLM) in an actor pool, over 2,000 items. The merged scores equal those of
`meaningbench score` exactly; a run killed midway (SIGKILL) and run again scores only what
is missing, and the merge writes each score once.

Ray starts once for the module (2 CPUs, bound to 127.0.0.1, no dashboard); the killed run
is a separate driver process joining it.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip(
    "ray", reason="the Ray tests need Ray Data: pip install 'meaningbench[cluster]'"
)

from meaningbench.cli import main  # noqa: E402
from meaningbench.cluster.layout import result_files  # noqa: E402
from meaningbench.db.study import copy_study  # noqa: E402
from tests.cluster.helpers import BATTERY, local_ray, make_study, scores  # noqa: E402
from tests.jobs.procs import Command, wait_until  # noqa: E402

N = 2000
METRICS = [*BATTERY, "bertscore"]


@pytest.fixture(scope="module")
def data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private data folder for the module's fixtures (the Ray workers have their own, so
    that neither finds embeddings the other cached: each computes BERTScore from scratch,
    in the same length-sorted batches)."""
    home = tmp_path_factory.mktemp("mbhome-ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEANINGBENCH_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def ray_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_ray(tmp_path_factory.mktemp("mbhome-workers")) as address:
        yield address


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory, data_home: Path) -> dict[str, Path]:
    """The same 2,000 unscored items three times, and one copy scored by `meaningbench score`."""
    folder = tmp_path_factory.mktemp("ray-studies")
    base = make_study(folder / "base.mbstudy", N)
    out = {
        name: copy_study(base, folder / f"{name}.mbstudy")
        for name in ("local", "killed", "one_step")
    }
    # BERTScore's float32 arithmetic depends on the number of threads (measured: 19 of 400
    # scores differ, by up to 1.2e-5 on the 0-100 scale, between one and two): the reference
    # runs with the one thread Ray gives a one-CPU actor, so equal means bit for bit.
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert main(["score", str(out["local"]), "--metrics", ",".join(METRICS), "--quiet"]) == 0
    finally:
        torch.set_num_threads(threads)
    return out


def _done_pairs(folder: Path) -> int:
    import pyarrow.parquet as pq

    n = 0
    for path in result_files(folder):
        try:
            n += pq.read_metadata(path).num_rows
        except Exception:
            continue  # being written
    return n


def test_a_killed_run_resumes_and_merges_exactly_once(
    ray_address: str, studies: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study, indir, outdir = studies["killed"], tmp_path / "in", tmp_path / "out"
    assert main(["shards", "export", str(study), str(indir), "--metrics", *METRICS]) == 0
    capsys.readouterr()
    total = N * len(METRICS)

    run = Command(
        ["shards", "score", str(indir), str(outdir), "--executor", "ray",
         "--address", ray_address, "--quiet"]
    )  # fmt: skip
    try:
        # The battery's tasks write their files first; BERTScore's actor is then still busy.
        wait_until(lambda: _done_pairs(outdir) > 0, "a first result file", timeout=240)
        assert run.proc.poll() is None, run.finish()
        run.proc.send_signal(signal.SIGKILL)
        run.proc.wait(timeout=30)
    finally:
        run.kill()
    time.sleep(1.0)  # the dead driver's workers are stopped by Ray
    kept = _done_pairs(outdir)
    assert 0 < kept < total

    code = main(["shards", "score", str(indir), str(outdir), "--executor", "ray", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["already_scored"] + data["scored"] == total
    assert data["already_scored"] >= kept > 0  # nothing finished was scored again

    assert main(["shards", "merge", str(study), str(outdir), "--json"]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert sum(m["written"] for m in merged["metrics"]) == total
    expected = scores(studies["local"])
    assert len(expected) == total
    assert scores(study) == expected  # also: no (metric, item) twice

    assert main(["shards", "merge", str(study), str(outdir), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert sum(m["written"] for m in again["metrics"]) == 0
    assert scores(study) == expected


def test_score_with_the_ray_executor_in_one_step(
    ray_address: str, studies: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    study = studies["one_step"]
    code = main(
        ["score", str(study), "--metrics", ",".join(BATTERY), "--executor", "ray", "--json"]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert sum(m["written"] for m in data["metrics"]) == N * len(BATTERY)
    assert not study.with_name(f"{study.name}.shards").exists()
    local = {k: v for k, v in scores(studies["local"]).items() if not k[0].startswith("bertscore")}
    assert scores(study) == local
