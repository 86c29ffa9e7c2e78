"""`meaningbench shards export|score|merge` with the local executor: the merged scores are the
ones `meaningbench score` writes, merging twice adds nothing, and a merge with any bad row
(another study, another config, changed texts) is refused whole with a message naming the
file, the row and the column."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from meaningbench.cli import main
from meaningbench.cluster.checksum import COVERED, row_checksum
from meaningbench.cluster.details import kept_details
from meaningbench.cluster.layout import result_files
from meaningbench.db.study import copy_study
from meaningbench.metrics.base import NOT_COMPUTED
from tests.cluster.helpers import make_study, query, scores, table_dump

METRICS = "bleu,sari,fkgl"
BLEU = "bleu[refs=source]"  # its label
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


def _set_values(path: Path, changes: dict[int, float], *, checksum: bool) -> None:
    """Change the value column of some rows; with `checksum`, as `shards score` would have
    written them (a metric that returned these values), else as a later edit."""
    table = pq.read_table(path)
    values = table.column("value").to_pylist()
    for row, value in changes.items():
        values[row] = value
    table = table.set_column(
        table.column_names.index("value"), "value", pa.array(values, pa.float64())
    )
    if checksum:
        cols = {c: table.column(c).to_pylist() for c in COVERED}
        sums = [row_checksum({c: cols[c][r] for c in COVERED}) for r in range(table.num_rows)]
        index = table.column_names.index("checksum")
        table = table.set_column(index, "checksum", pa.array(sums, pa.string()))
    pq.write_table(table, path)


def test_a_lost_result_file_refuses_the_merge_and_allow_missing_marks_the_runs(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    # One result file per export shard: items-00000 (50 items), -00001 (50), -00002 (20).
    lost = next(p for p in result_files(out) if p.name.startswith("items-00001"))
    lost_rows = pq.read_table(lost).num_rows
    lost.unlink()
    before = table_dump(sharded)
    code = main(["shards", "merge", str(sharded), str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "nothing was merged" in err and "--allow-missing" in err
    for label in ("bleu[refs=source]", "sari[refs=source]", "fkgl"):
        assert f"{label}: 70 results in {out}, the export asked for 120" in err
    assert "the results for items-00001.parquet (50 items) of the export are missing" in err
    assert table_dump(sharded) == before

    code = main(["shards", "merge", str(sharded), str(out), "--allow-missing", "--json"])
    captured = capsys.readouterr()
    merged = json.loads(captured.out)
    assert code == 0
    assert "merging the 70 there are (--allow-missing)" in captured.err
    assert [(m["written"], m["missing"], m["expected"]) for m in merged["metrics"]] == [
        (70, 50, 120)
    ] * 3
    assert sum(m["missing"] for m in merged["metrics"]) == lost_rows
    runs = query(sharded, "SELECT status, n_items, error FROM metric_run")
    assert [(status, n) for status, n, _ in runs] == [("interrupted", 70)] * 3
    assert all("50 of the 120 results the export asked for were missing" in e for *_, e in runs)

    # `meaningbench score` completes the incomplete runs: the study then holds what
    # scoring it here gives.
    assert run(capsys, "score", str(local), "--metrics", METRICS, "--workers", "1")[0] == 0
    code, data = run(capsys, "score", str(sharded), "--metrics", METRICS, "--workers", "1")
    assert code == 0 and [r["scored"] for r in data["runs"]] == [50] * 3
    assert scores(sharded) == scores(local)
    statuses = {status for status, *_ in query(sharded, "SELECT status FROM metric_run")}
    assert statuses == {"done"}


def test_a_changed_value_fails_its_checksum(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    path = result_files(out)[1]
    value = pq.read_table(path).column("value").to_pylist()[4]
    _set_values(path, {4: value + 1e-9}, checksum=False)  # a copy that rounds, an edit
    before = table_dump(sharded)
    code = main(["shards", "merge", str(sharded), str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path.name} row 5, column checksum: the row's values do not match" in err
    assert "nothing was merged" in err
    assert table_dump(sharded) == before


def test_results_without_checksums_are_refused(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    path = result_files(out)[0]
    table = pq.read_table(path)
    pq.write_table(table.drop_columns(["checksum"]), path)
    code = main(["shards", "merge", str(sharded), str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"{path}: no column checksum" in err


def test_nan_and_infinite_scores_are_counted_and_named(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    out = export_and_score(capsys, sharded, tmp_path)
    path = result_files(out)[0]
    table = pq.read_table(path)
    labels, ids = table.column("metric").to_pylist(), table.column("item_id").to_pylist()
    rows = [r for r, label in enumerate(labels) if label == BLEU][:3]
    _set_values(path, dict(zip(rows, [math.nan, math.inf, -math.inf], strict=True)), checksum=True)
    code = main(["shards", "merge", str(sharded), str(out), "--json"])
    captured = capsys.readouterr()
    merged, err = json.loads(captured.out), captured.err
    assert code == 0
    bad = sorted(ids[r] for r in rows)
    [bleu] = [m for m in merged["metrics"] if m["label"] == BLEU]
    assert bleu["nonfinite"] == bad and bleu["written"] == N
    shown = ", ".join(str(i) for i in bad)
    assert f"{BLEU}: 3 result(s) scored NaN or infinite (items {shown}); stored as no value" in err
    stored = query(
        sharded,
        "SELECT s.item_id, s.value, s.raw FROM score s JOIN metric_run r ON r.id = s.run_id "
        f"WHERE r.metric = 'bleu' AND s.item_id IN ({shown}) ORDER BY s.item_id",
    )
    assert [(i, v) for i, v, _ in stored] == [(i, None) for i in bad]
    assert all(raw is not None for *_, raw in stored)  # the raw score stays


def test_an_export_missing_an_item_shard_is_refused(
    twins: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sharded = twins
    code, _ = run(
        capsys, "shards", "export", str(sharded), str(tmp_path / "in"), "--metrics", METRICS,
        "--rows", "50",
    )  # fmt: skip
    assert code == 0
    (tmp_path / "in" / "items-00002.parquet").unlink()
    code = main(["shards", "score", str(tmp_path / "in"), str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "its item shards hold 100 items, its manifest.json says 120" in err
