"""The analysis commands' options out of range: one line naming the option, exit 2, no
traceback, no work done and nothing written; inside the range the same study is analysed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from meaningbench.cli import main
from tests.analysis.studybuild import SOURCES, add_items, add_ratings, add_scores


@pytest.fixture
def study(new_study) -> Path:  # noqa: ANN001
    rng = np.random.default_rng(3)
    rows = [(s, f"{s} output {k}", f"sys{k}") for s in SOURCES for k in range(3)]
    ids = add_items(new_study, rows)
    truth = rng.uniform(10, 90, len(ids))
    for name in ("ann", "bob"):
        add_ratings(
            new_study,
            name,
            {i: float(t + rng.normal(0, 9)) for i, t in zip(ids, truth, strict=True)},
        )
    add_scores(
        new_study, "bleu", {i: float(t + rng.normal(0, 8)) for i, t in zip(ids, truth, strict=True)}
    )
    add_scores(new_study, "chrf", {i: float(rng.uniform(0, 100)) for i in ids})
    return Path(new_study.path)


BAD = [
    (["metaeval", "--seed", "-1"], "--seed must lie between 0 and 4,294,967,295, not -1"),
    (["metaeval", "--seed", str(2**40)], "--seed must lie between 0 and"),
    (["metaeval", "--resamples", "10000000000000"], "--resamples must lie between 1 and 100,000"),
    (["metaeval", "--resamples", "0"], "--resamples must lie between 1 and 100,000, not 0"),
    (["metaeval", "--alpha", "1"], "--alpha must lie between 0 and 1, not 1"),
    (["simulate", "--seeds", "0"], "--seeds must lie between 1 and 1,000, not 0"),
    (["simulate", "--seeds", "1000000"], "--seeds must lie between 1 and 1,000"),
    (["simulate", "--step", "0.00001"], "--step must lie between 0.1 and 100"),
    (["simulate", "--step", "101"], "--step must lie between 0.1 and 100"),
    (["simulate", "--resamples", "100000000000"], "--resamples must lie between 1 and 100,000"),
    (["simulate", "--alpha", "0"], "--alpha must lie between 0 and 1, not 0"),
    (["simulate", "--out", "{tmp}/missing/plot.svg"], "no folder {tmp}/missing to write the plot"),
    (["agreement", "--seed", "-1"], "--seed must lie between 0 and"),
    (["agreement", "--boot", "100000000000"], "--boot must lie between 0 and 100,000"),
    (["agreement", "--splits", "10000000000"], "--splits must lie between 1 and 100,000"),
    (["report", "{tmp}/r.html", "--seed", "-1"], "--seed must lie between 0 and"),
    (["report", "{tmp}/r.html", "--boot", "100000000000"], "--boot must lie between 0 and"),
    (["report", "{tmp}/r.html", "--simulate-selection", "5000"], "--simulate-selection must lie"),
]


def _changes(path: Path) -> int:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(con.execute("PRAGMA data_version").fetchone()[0]) + sum(
            int(n) for (n,) in con.execute("SELECT count(*) FROM rating")
        )
    finally:
        con.close()


@pytest.mark.parametrize(("args", "message"), BAD)
def test_bad_values_get_one_line_and_exit_2(
    study: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    command, *rest = [a.replace("{tmp}", str(tmp_path)) for a in args]
    before = _changes(study)
    capsys.readouterr()
    assert main([command, str(study), *rest]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and "item [" not in line]
    assert lines == [line for line in lines if line.startswith(f"meaningbench {command}: error:")]
    assert len(lines) == 1, err
    assert message.replace("{tmp}", str(tmp_path)) in lines[0]
    assert _changes(study) == before
    assert not (tmp_path / "r.html").exists()
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["metaeval", "--seed", "4294967295", "--resamples", "20", "--measures", "pearson"],
        ["agreement", "--seed", "7", "--boot", "0", "--splits", "3"],
        ["simulate", "--seeds", "1", "--step", "50", "--resamples", "10"],
    ],
)
def test_values_at_the_edges_run(
    study: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    command, *rest = args
    assert main([command, str(study), *rest, "--json"]) == 0
    assert capsys.readouterr().out.lstrip().startswith("{")
