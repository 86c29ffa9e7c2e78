"""`meaningbench shards export|score|merge` with the local executor: the merged scores are the
ones `meaningbench score` writes, merging twice adds nothing, and a merge with any bad row
(another study, another config, changed texts) is refused whole with a message naming the
file, the row and the column."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from meaningbench.cli import main
from meaningbench.cluster.details import kept_details
from meaningbench.cluster.layout import result_files
from meaningbench.db.study import copy_study
from meaningbench.metrics.base import NOT_COMPUTED
from tests.cluster.helpers import make_study, scores, table_dump

METRICS = "bleu,sari,fkgl"
N = 120


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else {}


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two copies of one unscored study: one for `meaningbench score`, one for shards."""
    base = make_study(tmp_path / "base.mbstudy", N)
    return copy_study(base, tmp_path / "local.mbstudy"), copy_study(
        base, tmp_path / "shards.mbstudy"
    )


def export_and_score(
    capsys: pytest.CaptureFixture[str], study: Path, tmp_path: Path, *extra: str
) -> Path:
    code, exported = run(
        capsys, "shards", "export", str(study), str(tmp_path / "in"), "--metrics", METRICS,
        "--rows", "50",
    )  # fmt: skip
    assert code == 0 and exported["items"] == N and exported["shards"] == 3
    code, scored = run(
        capsys, "shards", "score", str(tmp_path / "in"), str(tmp_path / "out"), *extra
    )
    assert code == 0 and scored["scored"] == 3 * N
    return tmp_path / "out"


def test_merged_scores_equal_meaningbench_score_and_merging_twice_adds_nothing(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, sharded = twins
    assert run(capsys, "score", str(local), "--metrics", METRICS, "--workers", "1")[0] == 0
    out = export_and_score(capsys, sharded, tmp_path)

    code, merged = run(capsys, "shards", "merge", str(sharded), str(out))
    assert code == 0
    assert [(m["written"], m["current"]) for m in merged["metrics"]] == [(N, 0)] * 3
    expected = scores(local)
    assert len(expected) == 3 * N
    assert scores(sharded) == expected

    before = table_dump(sharded)
    code, again = run(capsys, "shards", "merge", str(sharded), str(out))
    assert code == 0
    assert [(m["written"], m["current"]) for m in again["metrics"]] == [(0, N)] * 3
    assert table_dump(sharded) == before

    # The study knows these scores now: scoring or exporting again finds nothing to do.
    code, data = run(capsys, "score", str(sharded), "--metrics", METRICS)
    assert code == 0 and {r["status"] for r in data["runs"]} == {"cached"}
    code, exported = run(
        capsys, "shards", "export", str(sharded), str(tmp_path / "again"), "--metrics", METRICS
    )
    assert code == 0 and exported["items"] == 0


def test_a_second_score_run_does_only_what_is_missing(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    files = result_files(out)
    # A run killed while writing leaves a file without a Parquet footer; one finished file
    # is lost too: the next run removes the first and scores exactly what the second held.
    lost = pq.read_table(files[0]).num_rows
    files[0].unlink()
    (out / "local-half").mkdir()
    (out / "local-half" / "part.parquet").write_bytes(b"PAR1 half a file")
    code, data = run(capsys, "shards", "score", str(tmp_path / "in"), str(out))
    assert code == 0
    assert data["scored"] == lost and data["already_scored"] == 3 * N - lost
    assert not (out / "local-half" / "part.parquet").exists()
    code, merged = run(capsys, "shards", "merge", str(sharded), str(out))
    assert code == 0 and sum(m["written"] for m in merged["metrics"]) == 3 * N


def test_results_of_another_study_are_refused(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    before = table_dump(local)
    code = main(["shards", "merge", str(local), str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "these results belong to study" in err and "nothing was merged" in err
    assert table_dump(local) == before


def _rewrite(path: Path, row: int, column: str, value: str) -> None:
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[row] = value
    index = table.column_names.index(column)
    pq.write_table(table.set_column(index, column, pa.array(values, pa.string())), path)


@pytest.mark.parametrize(
    ("column", "value", "says"),
    [
        ("config_hash", "0123456789abcdef", "column config_hash"),
        ("input_hash", "0" * 32, "texts changed since the export"),
        ("study_id", "another-study", "column study_id"),
    ],
)
def test_one_bad_row_refuses_the_whole_merge(
    twins: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    column: str,
    value: str,
    says: str,
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    last = result_files(out)[-1]
    _rewrite(last, 7, column, value)
    before = table_dump(sharded)
    code = main(["shards", "merge", str(sharded), str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{last.name} row 8" in err and says in err and "nothing was merged" in err
    assert table_dump(sharded) == before  # the good files before it were not written either


def test_results_for_another_config_are_refused(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    bleu = next(m for m in manifest["metrics"] if m["metric"] == "bleu")
    old = bleu["config_hash"]
    bleu["config_hash"] = "feedfacefeedface"
    (out / "manifest.json").write_text(json.dumps(manifest))
    for path in result_files(out):
        table = pq.read_table(path)
        hashes = [
            "feedfacefeedface" if h == old else h for h in table.column("config_hash").to_pylist()
        ]
        index = table.column_names.index("config_hash")
        pq.write_table(table.set_column(index, "config_hash", pa.array(hashes, pa.string())), path)
    before = table_dump(sharded)
    code = main(["shards", "merge", str(sharded), str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"scored with config hash feedfacefeedface, this study's {bleu['label']} has config hash {old}"
        in err
    )
    assert table_dump(sharded) == before


def test_compact_and_no_details(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, sharded = twins
    assert run(capsys, "score", str(local), "--metrics", METRICS, "--workers", "1")[0] == 0
    out = export_and_score(capsys, sharded, tmp_path, "--details", "compact")
    assert run(capsys, "shards", "merge", str(sharded), str(out))[0] == 0
    full, compact = scores(local), scores(sharded)
    assert full.keys() == compact.keys()
    for key, (value, raw, details, error, digest) in full.items():
        assert compact[key][:2] == (value, raw) and compact[key][3:] == (error, digest)
        kept = kept_details(json.loads(details) if details else {}, "compact")
        assert (json.loads(compact[key][2]) if compact[key][2] else {}) == kept
        assert all(not isinstance(v, list | dict) for v in kept.values())


def test_no_details_keeps_the_reason_a_score_was_not_computed() -> None:
    details = {NOT_COMPUTED: "not defined: no words", "words": [1, 2], "n": 3}
    assert kept_details(details, "none") == {NOT_COMPUTED: "not defined: no words"}
    assert kept_details(details, "compact") == {NOT_COMPUTED: "not defined: no words", "n": 3}
    assert kept_details({"p": 0.5, "tokens": ["a"]}, "none") == {}
