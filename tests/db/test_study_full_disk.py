"""A full disk (or a file size limit) under `meaningbench` commands: one line saying what
happened and what to do, exit 2, no traceback, the study as it was, nothing left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from meaningbench.db.study import copy_study, create_study
from tests.fault_tools import (
    assert_one_line_error,
    cli,
    file_size_limit,
    files_in,
    private_mount_namespace,
    study_state,
    write_pairs,
)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    write_pairs(folder / "small.csv", 200)
    write_pairs(folder / "big.csv", 30_000, tag="Other")
    return folder


@pytest.fixture(scope="module")
def base_study(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meaningbench.datasets.importer import import_file

    path = tmp_path_factory.mktemp("base") / "base.mbstudy"
    study = create_study(path)
    import_file(study, data / "small.csv")
    study.close()
    return path


@pytest.fixture
def study(base_study: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "studies"
    folder.mkdir()
    return copy_study(base_study, folder / "s.mbstudy")


def test_import_past_a_size_limit_leaves_the_study_as_it_was(study: Path, data: Path) -> None:
    before = study_state(study)
    limit = study.stat().st_size + 64 * 1024  # the write-ahead log cannot hold the import
    done = cli("import", study, data / "big.csv", "--same-raters", preexec=file_size_limit(limit))
    assert_one_line_error(done, str(study), "cannot write", "changed nothing", "run it again")
    assert study_state(study) == before
    assert files_in(study.parent) == ["s.mbstudy"]


def test_import_into_a_new_study_past_a_size_limit_leaves_no_file(
    tmp_path: Path, data: Path
) -> None:
    folder = tmp_path / "new"
    folder.mkdir()
    done = cli("import", folder / "n.mbstudy", data / "big.csv", preexec=file_size_limit(1_000_000))
    assert_one_line_error(done, str(folder / "n.mbstudy"), "cannot write")
    assert files_in(folder) == []


def test_export_past_a_size_limit_keeps_the_previous_export(study: Path, data: Path) -> None:
    # Enough ratings that the export, not the study, meets the limit.
    assert cli("import", study, data / "big.csv", "--same-raters").returncode == 0
    out = study.parent / "ratings.csv"
    out.write_text("the previous export\n", encoding="utf-8")
    before = files_in(study.parent)
    done = cli("export", study, out, "--ratings", preexec=file_size_limit(200_000))
    assert_one_line_error(done, str(out), "cannot write")
    assert out.read_text(encoding="utf-8") == "the previous export\n"
    assert files_in(study.parent) == before


def test_a_genuinely_full_disk(base_study: Path, data: Path, tmp_path: Path) -> None:
    """ENOSPC from a 600 KiB tmpfs (where this process may mount one, privately)."""
    prefix = private_mount_namespace()
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    copy_study(base_study, tmp_path / "s.mbstudy")
    setup = (
        f'mount -t tmpfs -o size=600k tmpfs "{disk}" && cp "{tmp_path}/s.mbstudy" "{disk}/" '
        '&& "$@"; rc=$?; cp -a "' + str(disk) + '/." "' + str(kept) + '/"; exit $rc'
    )
    wrap = [*prefix, "sh", "-c", setup, "sh"]
    done = cli("import", disk / "s.mbstudy", data / "big.csv", "--same-raters", wrap=wrap)
    assert_one_line_error(done, "the disk is full", "Free some disk space")
    assert study_state(kept / "s.mbstudy") == study_state(base_study)
    assert files_in(kept) == ["s.mbstudy"]


@pytest.fixture(scope="module")
def big_study(data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meaningbench.datasets.importer import import_file

    path = tmp_path_factory.mktemp("big") / "big.mbstudy"
    study = create_study(path)
    import_file(study, data / "big.csv")
    study.close()
    return path


def test_score_past_a_size_limit_is_a_message(big_study: Path, tmp_path: Path) -> None:
    study = copy_study(big_study, tmp_path / "s.mbstudy")
    done = cli("score", study, "--metrics", "chrf", preexec=file_size_limit(1_000_000))
    assert_one_line_error(done, str(study), "cannot write", "run it again")
    assert study_state(study)[:3] == study_state(big_study)[:3]


def test_merge_past_a_size_limit_leaves_the_study_as_it_was(
    big_study: Path, data: Path, tmp_path: Path
) -> None:
    study = copy_study(big_study, tmp_path / "s.mbstudy")
    other = copy_study(big_study, tmp_path / "other.mbstudy")
    # The same items rated by other raters: 30,000 ratings for the merge to add.
    text = (data / "big.csv").read_text(encoding="utf-8").replace(",r", ",other-r")
    (tmp_path / "others.csv").write_text(text, encoding="utf-8")
    assert cli("import", other, tmp_path / "others.csv").returncode == 0
    before = study_state(study)
    done = cli("merge", study, other, preexec=file_size_limit(1_000_000))
    assert_one_line_error(done, str(study), "cannot write", "changed nothing")
    assert study_state(study) == before
