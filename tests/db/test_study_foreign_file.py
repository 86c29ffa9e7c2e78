"""An SQLite file that is not a study is refused by every command and left byte-identical:
opening a study switches it to WAL mode, a write that must never reach a foreign file."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from meaningbench.cli import main


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def other(tmp_path: Path) -> Path:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["info", "{db}"],
        ["export", "{db}", "{dir}/out.csv"],
        ["score", "{db}", "--metrics", "bleu"],
        ["import", "{db}", "{dir}/pairs.tsv"],
    ],
    ids=["info", "export", "score", "import"],
)
def test_a_foreign_sqlite_file_is_refused_and_left_byte_identical(
    other: Path, tmp_path: Path, args: list[str], capsys
) -> None:
    (tmp_path / "pairs.tsv").write_text("source\toutput\nA cat sat.\tA cat sat down.\n")
    before = _sha(other)
    assert other.read_bytes()[18:20] == b"\x01\x01"  # rollback journal, not WAL
    argv = [a.format(db=other, dir=tmp_path) for a in args]
    assert main(argv) != 0
    assert "not a MeaningBench study" in capsys.readouterr().err
    assert _sha(other) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db", "pairs.tsv"]
