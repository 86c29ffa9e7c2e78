"""`collect` on full disks: a full disk under the kits folder is no matter (the kits are only
read); the lead's disk filling up half way stops the collect with a message naming the kits
that came in, the one it stopped at and those not read."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from meaningbench.annotation.session import AnnotationSession
from meaningbench.cli import main
from meaningbench.db.models import Rating
from meaningbench.db.study import copy_study, open_study
from tests.fault_tools import (
    assert_one_line_error,
    cli,
    file_digest,
    file_size_limit,
    private_mount_namespace,
    study_state,
)
from tests.kits.campaign_helpers import lead_study, rate_kit

RATERS = ("ana", "ben", "carla")


def _kits(tmp_path: Path, *, big: str | None = None) -> tuple[Path, Path]:
    """The lead's study and its three kits, rated and sent back; `big`: that rater's kit
    carries a 1 MB comment on a rating (a kit the lead's disk may not have room for)."""
    lead = tmp_path / "lead.mbstudy"
    lead_study(lead, seed=1, n_sources=8).close()
    made, back = tmp_path / "made", tmp_path / "back"
    assert main(["kit", str(lead), "--raters", ",".join(RATERS), "--out", str(made)]) == 0
    back.mkdir()
    for rater in RATERS:
        rate_kit(made / f"{rater}.mbkit", rater, 3)
        if rater == big:
            kit = open_study(made / f"{rater}.mbkit")
            try:
                with kit.session() as s:
                    item_id = s.scalars(select(Rating.item_id)).first()
                assert item_id is not None
                AnnotationSession(kit, rater).flag(item_id, "x" * 1_000_000)
            finally:
                kit.close()
        copy_study(made / f"{rater}.mbkit", back / f"{rater}.mbkit")
    return lead, back


def test_a_full_disk_under_the_kits_folder_is_no_matter(tmp_path: Path) -> None:
    prefix = private_mount_namespace()
    lead, back = _kits(tmp_path)
    disk = tmp_path / "disk"
    disk.mkdir()
    # The kits on a disk of their own, filled to the last byte.
    setup = (
        f'mount -t tmpfs -o size=2m tmpfs "{disk}" && cp "{back}"/*.mbkit "{disk}/" '
        f'&& (cat /dev/zero > "{disk}/filler" 2>/dev/null; true) && "$@"; rc=$?; '
        f'rm -f "{disk}/filler"; ls -A "{disk}" > "{tmp_path}/listing"; exit $rc'
    )
    done = cli("collect", lead, disk, wrap=[*prefix, "sh", "-c", setup, "sh"])
    assert done.returncode == 0, done.stderr
    assert "3 kits collected (9 new ratings), 0 refused" in done.stdout
    listing = (tmp_path / "listing").read_text().split()
    assert listing == [f"{r}.mbkit" for r in RATERS]  # no -wal or -shm left beside them


def test_the_leads_disk_filling_up_names_what_came_in(tmp_path: Path) -> None:
    lead, back = _kits(tmp_path, big="ben")
    before = file_digest(back / "ben.mbkit")
    limit = lead.stat().st_size + 512 * 1024  # room for ana's kit, not for ben's comment
    done = cli("collect", lead, back, preexec=file_size_limit(limit))
    line = assert_one_line_error(
        done,
        str(lead),
        "cannot write",
        "the collect stopped at ben.mbkit, of which nothing was merged",
        "Collected before it and kept: ana.mbkit",
        "Not read yet: carla.mbkit",
    )
    assert "the failed write changed nothing" not in line
    _check, _items, ratings, _schema = study_state(lead)
    assert ratings == 16 + 3  # the published labels and ana's three
    assert file_digest(back / "ben.mbkit") == before
