"""A full disk under the commands that write output files (report, dataset, spans export):
one line saying so, exit 2, and the earlier output byte for byte as it was."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from meaningbench.db.study import create_study
from tests.fault_tools import (
    assert_one_line_error,
    cli,
    private_mount_namespace,
    write_pairs,
)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meaningbench.datasets.importer import import_file

    folder = tmp_path_factory.mktemp("study")
    write_pairs(folder / "pairs.csv", 200)
    path = folder / "s.mbstudy"
    st = create_study(path)
    import_file(st, folder / "pairs.csv")
    st.close()
    return path


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (hidden ones too) with its bytes."""
    out = {}
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = Path(root) / name
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def _on_a_full_disk(tmp_path: Path, old: Path, *args: str | Path, target: str):
    """Run `meaningbench ARGS` (TARGET standing for the output's path) on a 64 KiB tmpfs
    holding `old`'s files, filled to the last byte; returns the run and what the disk held
    afterwards."""
    prefix = private_mount_namespace()
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    setup = (
        f'mount -t tmpfs -o size=64k tmpfs "{disk}" && cp -a "{old}/." "{disk}/" '
        f'&& (dd if=/dev/zero of="{disk}/filler" bs=1024 2>/dev/null; true) '
        f'&& "$@"; rc=$?; rm -f "{disk}/filler"; cp -a "{disk}/." "{kept}/"; exit $rc'
    )
    argv = [str(a).replace("TARGET", str(disk / target)) for a in args]
    done = cli(*argv, wrap=[*prefix, "sh", "-c", setup, "sh"])
    return done, kept


@pytest.mark.parametrize(
    ("args", "target", "old_files"),
    [
        (
            ("report", "STUDY", "TARGET", "--no-sanity", "--boot", "0"),
            "r.html",
            {"r.html": b"<html>the previous report</html>\n" * 50},
        ),
        (
            ("spans", "export", "STUDY", "TARGET"),
            "spans.jsonl",
            {"spans.jsonl": b'{"previous": "spans"}\n' * 40},
        ),
        (
            ("dataset", "STUDY", "TARGET", "--boot", "0"),
            "ds",
            {
                "ds/README.md": b"---\npretty_name: previous\n---\n# previous\n",
                "ds/ratings.parquet": b"PAR1 previous ratings PAR1",
                "ds/spans.jsonl": b'{"previous": "spans"}\n',
            },
        ),
    ],
    ids=["report", "spans-export", "dataset"],
)
def test_a_full_disk_keeps_the_earlier_output(
    study: Path,
    tmp_path: Path,
    args: tuple[str, ...],
    target: str,
    old_files: dict[str, bytes],
) -> None:
    if args[0] == "dataset":
        pytest.importorskip(
            "pyarrow", reason="install pyarrow: pip install 'meaningbench[parquet]'"
        )
    old = tmp_path / "old"
    for name, data in old_files.items():
        (old / name).parent.mkdir(parents=True, exist_ok=True)
        (old / name).write_bytes(data)
    argv = [study if a == "STUDY" else a for a in args]
    done, kept = _on_a_full_disk(tmp_path, old, *argv, target=target)
    assert_one_line_error(done, target, "the disk is full", "changed nothing")
    # Byte for byte, and nothing else left behind (no partial file, no staging folder).
    assert _tree(kept) == old_files


def test_a_new_output_on_a_full_disk_leaves_nothing(study: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow", reason="install pyarrow: pip install 'meaningbench[parquet]'")
    old = tmp_path / "old"
    old.mkdir()
    done, kept = _on_a_full_disk(
        tmp_path, old, "dataset", study, "TARGET", "--boot", "0", target="ds"
    )
    assert_one_line_error(done, "the disk is full")
    assert _tree(kept) == {} and os.listdir(kept) == []
