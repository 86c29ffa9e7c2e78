"""A study this user may not write (read-only file, folder or medium): the reading commands
read it without leaving anything beside it; the writing commands say it is read-only."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from meaningbench.db.study import copy_study, create_study
from tests.fault_tools import (
    assert_one_line_error,
    cli,
    file_digest,
    files_in,
    make_old_study,
    private_mount_namespace,
    study_state,
    unprivileged,
    write_pairs,
)

READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
READ_ONLY_FOLDER = READ_ONLY_FILE | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    write_pairs(folder / "small.csv", 200)
    write_pairs(folder / "more.csv", 50, tag="Other")
    return folder


@pytest.fixture(scope="module")
def scored(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meaningbench.datasets.importer import import_file

    path = tmp_path_factory.mktemp("scored") / "scored.mbstudy"
    study = create_study(path)
    import_file(study, data / "small.csv")
    study.close()
    done = cli("score", path, "--metrics", "bleu")
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[list[Path]]:
    """Paths made read-only by a test, writable again afterwards (for the clean-up)."""
    paths: list[Path] = []
    yield paths
    for p in paths:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def _read_only_copy(scored: Path, tmp_path: Path, what: str, locked: list[Path]) -> Path:
    folder = tmp_path / "ro"
    folder.mkdir()
    study = copy_study(scored, folder / "s.mbstudy")
    study.chmod(READ_ONLY_FILE)
    locked.append(study)
    if what == "folder":
        folder.chmod(READ_ONLY_FOLDER)
        locked.append(folder)
    return study


@pytest.mark.parametrize("what", ["file", "folder"])
def test_reading_commands_read_a_read_only_study_and_leave_nothing_beside_it(
    scored: Path, tmp_path: Path, what: str, locked: list[Path]
) -> None:
    as_user = unprivileged()
    study = _read_only_copy(scored, tmp_path, what, locked)
    digest = file_digest(study)
    out = tmp_path / "out"
    out.mkdir()
    runs = {
        "info": cli("info", study, preexec=as_user),
        "export": cli("export", study, out / "items.csv", preexec=as_user),
        "correlate": cli("correlate", study, preexec=as_user),
        "report": cli("report", study, out / "report.html", preexec=as_user),
        "sanity": cli("sanity", study, preexec=as_user),
        "agreement": cli("agreement", study, preexec=as_user),
        "qc": cli("qc", study, preexec=as_user),
    }
    for name, done in runs.items():
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert done.returncode == 0, (name, done.stderr)
        assert "is read-only" in done.stderr and "opened for reading only" in done.stderr
    assert "items: 200" in runs["info"].stdout
    assert "bleu" in runs["correlate"].stdout
    assert len((out / "items.csv").read_text(encoding="utf-8").splitlines()) == 201
    # No -wal/-shm left (they would keep the study unwritable once it is writable again).
    assert files_in(study.parent) == ["s.mbstudy"]
    assert file_digest(study) == digest


@pytest.mark.parametrize("what", ["file", "folder"])
def test_writing_commands_say_the_study_is_read_only(
    scored: Path, data: Path, tmp_path: Path, what: str, locked: list[Path]
) -> None:
    as_user = unprivileged()
    study = _read_only_copy(scored, tmp_path, what, locked)
    digest = file_digest(study)
    other = copy_study(scored, tmp_path / "other.mbstudy")
    for args in (
        ("import", study, data / "more.csv", "--same-raters"),
        ("score", study, "--metrics", "chrf"),
        ("merge", study, other),
    ):
        done = cli(*args, preexec=as_user)
        assert_one_line_error(done, str(study), "the study is read-only", "copy it to a writable")
    assert files_in(study.parent) == ["s.mbstudy"]
    assert file_digest(study) == digest


def test_a_read_only_study_made_writable_again_takes_writes(
    scored: Path, data: Path, tmp_path: Path, locked: list[Path]
) -> None:
    as_user = unprivileged()
    study = _read_only_copy(scored, tmp_path, "file", locked)
    assert cli("info", study, preexec=as_user).returncode == 0
    study.chmod(study.stat().st_mode | stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    done = cli("import", study, data / "more.csv", "--same-raters", preexec=as_user)
    assert done.returncode == 0, done.stderr
    assert study_state(study)[1] == 250


def test_merge_reads_another_copy_in_a_read_only_folder(
    scored: Path, tmp_path: Path, locked: list[Path]
) -> None:
    as_user = unprivileged()
    other = _read_only_copy(scored, tmp_path, "folder", locked)
    mine = copy_study(scored, tmp_path / "mine.mbstudy")
    done = cli("merge", mine, other, preexec=as_user)
    assert done.returncode == 0, done.stderr
    assert "200 already present" in done.stdout
    assert files_in(other.parent) == ["s.mbstudy"]


def test_no_study_is_created_in_a_read_only_folder(
    data: Path, tmp_path: Path, locked: list[Path]
) -> None:
    as_user = unprivileged()
    folder = tmp_path / "ro"
    folder.mkdir(mode=READ_ONLY_FOLDER)
    folder.chmod(READ_ONLY_FOLDER)
    locked.append(folder)
    done = cli("import", folder / "n.mbstudy", data / "small.csv", preexec=as_user)
    assert_one_line_error(done, "cannot create a study there", "the folder is read-only")
    assert files_in(folder) == []


def test_an_older_study_on_read_only_media_is_not_upgraded(
    tmp_path: Path, locked: list[Path]
) -> None:
    as_user = unprivileged()
    folder = tmp_path / "ro"
    folder.mkdir()
    study = make_old_study(folder / "old.mbstudy")
    folder.chmod(READ_ONLY_FOLDER)
    locked.append(folder)
    done = cli("info", study, preexec=as_user)
    assert_one_line_error(done, "schema 0002", "must be upgraded", "read-only", "Copy it")
    assert files_in(folder) == ["old.mbstudy"]


def test_a_study_on_a_read_only_medium(scored: Path, data: Path, tmp_path: Path) -> None:
    """EROFS from a read-only bind mount (where this process may mount, privately)."""
    prefix = private_mount_namespace()
    folder = tmp_path / "medium"
    folder.mkdir()
    study = copy_study(scored, folder / "s.mbstudy")
    digest = file_digest(study)
    setup = f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && "$@"'
    wrap = [*prefix, "sh", "-c", setup, "sh"]
    info = cli("info", study, wrap=wrap)
    assert info.returncode == 0 and "Traceback" not in info.stderr, info.stderr
    assert "items: 200" in info.stdout and "read-only disk or medium" in info.stderr
    done = cli("import", study, data / "more.csv", "--same-raters", wrap=wrap)
    assert_one_line_error(done, "the study is read-only", "read-only disk or medium")
    assert files_in(folder) == ["s.mbstudy"]
    assert file_digest(study) == digest


@pytest.fixture(scope="module")
def labelled(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Raters' ratings and the published labels (their means) of the same 200 pairs."""
    import csv

    folder = tmp_path_factory.mktemp("labelled")
    with (data / "small.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with (folder / "labels.csv").open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["source", "output", "meaning"])
        out.writerows([r["source"], r["output"], r["meaning"]] for r in rows)
    path = folder / "labelled.mbstudy"
    assert cli("import", path, data / "small.csv").returncode == 0
    done = cli("import", path, folder / "labels.csv", "--ratings", "aggregate")
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.parametrize("what", ["file", "folder"])
def test_audit_and_corpus_only_read_so_they_run_on_a_read_only_study(
    labelled: Path, tmp_path: Path, what: str, locked: list[Path]
) -> None:
    as_user = unprivileged()
    study = _read_only_copy(labelled, tmp_path, what, locked)
    digest = file_digest(study)
    runs = {
        "audit": cli("audit", study, preexec=as_user),
        "corpus": cli("corpus", study, "--metrics", "chrf", preexec=as_user),
    }
    for name, done in runs.items():
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert done.returncode == 0, (name, done.stderr)
        assert "opened for reading only" in done.stderr
    assert "aggregate labels against raw ratings" in runs["audit"].stdout
    assert "chrf" in runs["corpus"].stdout
    fix = cli("audit", study, "--fix", "corrected", preexec=as_user)
    assert_one_line_error(fix, str(study), "the study is read-only")
    assert files_in(study.parent) == ["s.mbstudy"]
    assert file_digest(study) == digest
