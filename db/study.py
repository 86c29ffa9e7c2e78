"""Creating and opening study files, with schema migrations and a backup before upgrades."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from meaningbench.db import study_files
from meaningbench.db.access import StudyAccess, folder_access, read_only_uris, study_access
from meaningbench.db.engine import (
    WRITE_OPTION,
    WaitPolicy,
    make_engine,
    make_read_only_engine,
    make_sessionmaker,
    set_wait_policy,
)
from meaningbench.db.errors import (
    MigrationError,
    NewerSchemaError,
    StudyFileError,
    StudyReadOnlyError,
    StudyWriteError,
)
from meaningbench.db.faults import describe_fault, fault_reason, read_only_message
from meaningbench.db.models import Dimension
from meaningbench.db.network_fs import network_warning
from meaningbench.db.partials import COMPANION_SUFFIXES, remove_stale_parts

if TYPE_CHECKING:
    from alembic.config import Config

LOG = logging.getLogger("meaningbench.db")
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# The newest migration's revision. Opening a study at this revision needs no Alembic at all
# (importing it and scanning the scripts costs most of a second); a test keeps it equal to
# the head of db/migrations/versions.
SCHEMA_HEAD = "0008"

DEFAULT_DIMENSIONS = (
    dict(
        name="meaning",
        question="How much of the original sentence's meaning does the output preserve?",
        label_low="no meaning preserved",
        label_high="all meaning preserved",
        position=0,
        active=True,
    ),
    dict(
        name="fluency",
        question="How fluent and grammatical is the output?",
        label_low="not fluent at all",
        label_high="perfectly fluent",
        position=1,
        active=False,
    ),
    dict(
        name="simplicity",
        question="How much simpler than the original is the output?",
        label_low="not simpler",
        label_high="much simpler",
        position=2,
        active=False,
    ),
)


def alembic_config(engine: Engine | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if engine is not None:
        cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    """The head as Alembic's scripts say (slow); `SCHEMA_HEAD` is the fast copy."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    return {rev.revision for rev in script.walk_revisions()}


def current_revision(engine: Engine) -> str | None:
    """The study's schema revision, read straight from Alembic's version table."""
    with engine.connect() as conn:
        has_table = conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'"
        ).first()
        if not has_table:
            return None
        row = conn.exec_driver_sql("SELECT version_num FROM alembic_version").first()
        return None if row is None else str(row[0])


def upgrade_to_head(engine: Engine) -> None:
    from alembic import command

    command.upgrade(alembic_config(engine), "head")


def remove_study_files(path: Path) -> None:
    """Delete a study file and its companions."""
    for suffix in ("", *COMPANION_SUFFIXES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def backup_copy(path: Path, tag: str) -> Path:
    """A consistent copy of the study (WAL content included) beside it; returns its path.

    Made once per state of the study: when an earlier attempt (an upgrade that failed)
    left a copy of exactly this content, that copy is returned and no new one is made.
    The copy is written under a hidden partial name (removed on failure, or, after a kill,
    by the next write in the folder) and named only when complete.
    """
    part = path.with_name(f".{path.name}.bak-{tag}.{os.getpid()}.mbpart")
    remove_study_files(part)
    try:
        # Read-write, though it only reads: a read-only connection that is the last one
        # to close leaves the study's -wal and -shm behind.
        sqlite_copy(path, part, mode="rw")
    except (sqlite3.Error, OSError) as exc:
        remove_study_files(part)
        why = fault_reason(exc, path) or str(exc)
        raise StudyWriteError(
            f"{path}: the study must be upgraded, but the backup copy made before an upgrade "
            f"could not be written beside it ({why}); the study was not changed. Free some "
            "space in its folder and open it again."
        ) from exc
    for earlier in sorted(path.parent.glob(f"{_glob_escape(path.name)}.bak-{tag}-*")):
        if _same_bytes(earlier, part):
            remove_study_files(part)
            return earlier
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.bak-{tag}-{stamp}")
    os.replace(part, dest)
    return dest


def _glob_escape(name: str) -> str:
    import glob

    return glob.escape(name)


def _same_bytes(a: Path, b: Path) -> bool:
    # Backups are our own closed copies, never live studies: plain reads are safe here.
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        with a.open("rb") as fa, b.open("rb") as fb:
            while True:
                ca, cb = fa.read(1 << 20), fb.read(1 << 20)
                if ca != cb:
                    return False
                if not ca:
                    return True
    except OSError:
        return False


@dataclass(eq=False)  # one object per open: held by identity (see study_files)
class Study:
    """An open study file. Sessions are per thread: call `session()` where the work runs."""

    path: Path
    engine: Engine
    _factory: sessionmaker[Session] = field(repr=False)
    backup_path: Path | None = None
    # Opened for reading only (a read-only file, folder or medium): writes fail at once.
    read_only: bool = False
    # Why it is read-only, in words ("its folder is read-only"); empty when writable.
    read_only_reason: str = ""
    # Set when the file is on a network file system, where SQLite's locking is not safe.
    network_warning: str | None = None

    def __post_init__(self) -> None:
        # One registry of the process's handles on study files: see meaningbench.db.study_files.
        study_files.hold(self.path)
        study_files.track(self.path, self)
        self._closed = False

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on any error.

        `write=True` takes the write lock when the transaction begins (BEGIN IMMEDIATE),
        waiting for another process's writes as the wait policy says (see meaningbench.db.engine). A
        transaction that writes should say so: a deferred one that reads first and writes
        later fails at once when another process committed in between.
        """
        # A `-wal` deleted under this process's connections would read as a malformed
        # study: noticed here, before the transaction, and the study opened again.
        study_files.reopen_if_replaced(self.path)
        with self._factory() as s, s.begin():
            if write:
                s.connection(execution_options={WRITE_OPTION: True})
            yield s

    def set_wait_policy(self, policy: WaitPolicy) -> None:
        """How this study's writes wait for other processes (messages, cancelling)."""
        set_wait_policy(self.engine, policy)

    def close_connections(self) -> None:
        """Close the pooled connections; the next session opens new ones."""
        self.engine.dispose()

    def close(self) -> None:
        self.engine.dispose()
        if not self._closed:
            self._closed = True
            study_files.release(self.path)

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_not_a_database(exc: BaseException) -> bool:
    return "file is not a database" in str(exc) or "not a database" in str(exc)


def _seed_defaults(factory: sessionmaker[Session]) -> None:
    with factory() as s, s.begin():
        if s.scalar(select(Dimension.id).limit(1)) is None:
            s.add_all(Dimension(**d) for d in DEFAULT_DIMENSIONS)


def create_study(path: str | Path, *, shown_as: Path | None = None) -> Study:
    """Create a new, empty study at `path` (refuses to overwrite an existing file).

    `shown_as`: the name messages give the study when it is built under another one.
    """
    path = Path(path)
    name = shown_as or path
    if path.exists() and path.stat().st_size > 0:
        raise StudyFileError(f"{name}: a file already exists there")
    path.parent.mkdir(parents=True, exist_ok=True)
    access = folder_access(path.parent)
    if not access.writable:
        raise StudyReadOnlyError(
            f"{name}: cannot create a study there ({access.reason}); nothing was written. "
            "Choose a folder you may write."
        )
    engine = make_engine(path)
    try:
        upgrade_to_head(engine)
        factory = make_sessionmaker(engine)
        _seed_defaults(factory)
    except Exception as exc:
        engine.dispose()
        remove_study_files(path)  # a half-made study is of no use to anyone
        fault = describe_fault(exc, name)
        if fault is None:
            raise
        raise fault from exc
    return Study(path=path, engine=engine, _factory=factory)


def open_study(path: str | Path, *, create: bool = False, allow_read_only: bool = False) -> Study:
    """Open a study, upgrading an older schema after a backup copy; refuse a newer one.

    A study this process may not write (read-only file, folder or medium) is refused with
    a `StudyReadOnlyError`, or, with `allow_read_only`, opened for reading only.
    A study on a network file system is opened with a warning, logged once per open and
    kept as `network_warning` (see meaningbench.db.network_fs).
    """
    study = _open_study(Path(path), create=create, allow_read_only=allow_read_only)
    warning = network_warning(study.path)
    if warning is not None:
        study.network_warning = warning
        LOG.warning(warning)
    return study


def _open_study(path: Path, *, create: bool, allow_read_only: bool) -> Study:
    # What a killed import or export left in this folder goes now, not at the next import.
    remove_stale_parts(path.parent if str(path.parent) else Path("."))
    if not path.exists() or path.stat().st_size == 0:
        if create:
            return create_study(path)
        if path.exists():
            raise StudyFileError(
                f"{path}: the file is empty (0 bytes), not a MeaningBench study; delete it "
                "and import again, or choose another name"
            )
        raise StudyFileError(f"{path}: no such study")
    access = study_access(path)
    if not access.writable:
        if not allow_read_only:
            raise StudyReadOnlyError(read_only_message(path, access.reason))
        return _open_read_only(path, access)
    # The header is checked by SQLite itself, never by reading the file here: on POSIX,
    # closing any descriptor of a file drops every lock this process holds on it, so a
    # plain open() and close() beside a live connection (a second open of the same study)
    # lets another process checkpoint and delete the write-ahead log under that connection.
    _refuse_foreign(path)
    engine = make_engine(path)
    try:
        rev = current_revision(engine)
    except Exception as exc:  # a corrupt file or one locked by a foreign program
        engine.dispose()
        raise _open_error(path, exc) from None
    head = SCHEMA_HEAD
    backup: Path | None = None
    if rev is None:
        engine.dispose()
        raise StudyFileError(f"{path}: an SQLite file, but not a MeaningBench study")
    if rev != head:
        if rev not in known_revisions():
            engine.dispose()
            raise NewerSchemaError(_newer_message(path, rev))
        engine.dispose()
        backup = backup_copy(path, rev)
        engine = make_engine(path)
        try:
            upgrade_to_head(engine)
        except Exception as exc:
            engine.dispose()
            _ensure_unchanged(path, rev, backup)
            raise MigrationError(_migration_message(path, rev, backup, exc)) from exc
    factory = make_sessionmaker(engine)
    try:
        _seed_defaults(factory)
    except Exception as exc:
        engine.dispose()
        fault = describe_fault(exc, path)
        if fault is None:
            raise
        raise fault from exc
    return Study(path=path, engine=engine, _factory=factory, backup_path=backup)


def _refuse_foreign(path: Path) -> None:
    """Refuse an SQLite file that is not a study before anything writes to it.

    A study engine's first connection switches the file to WAL mode (a write to bytes 18-19
    of its header): a plain SQLite database given by mistake must be left byte-identical.
    The check reads the schema through SQLite (same library, so this process's locks on a
    study it already holds open are kept), with writes refused and without creating the
    file (`mode=rw`, `query_only`).
    """
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    except sqlite3.Error as exc:
        raise _open_error(path, exc) from None
    try:
        study_files.leave_log_if_guest(conn)
        conn.execute("PRAGMA query_only=ON")
        found = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='alembic_version'"
        ).fetchone()
    except sqlite3.Error as exc:
        raise _open_error(path, exc) from None
    finally:
        conn.close()
    if found is None:
        raise StudyFileError(f"{path}: an SQLite file, but not a MeaningBench study")


def _open_error(path: Path, exc: BaseException) -> StudyFileError:
    if _is_not_a_database(exc):
        return StudyFileError(f"{path}: not a MeaningBench study (not an SQLite file)")
    fault = describe_fault(exc, path)
    if fault is not None:
        return fault
    return StudyFileError(f"{path}: cannot open the study ({exc})")


def _newer_message(path: Path, rev: str) -> str:
    return (
        f"{path}: this study was written by a newer MeaningBench (schema {rev}); "
        f"this version knows schemas up to {SCHEMA_HEAD}. Update MeaningBench to open it."
    )


def _ensure_unchanged(path: Path, rev: str, backup: Path) -> None:
    """After a failed upgrade: the study must still be at `rev`, else it gets its backup back.

    The upgrade runs in one transaction (db/migrations/env.py), so this is a guard against
    a migration that commits on its own, not the normal way back.
    """
    engine = make_engine(path)
    try:
        now = current_revision(engine)
    except Exception:
        now = None
    finally:
        engine.dispose()
    if now == rev:
        return
    sqlite_copy(backup, path, mode="rw")


def _migration_message(path: Path, rev: str, backup: Path, exc: BaseException) -> str:
    why = fault_reason(exc, path)
    if why is not None:
        advice = "Free some disk space (or check the disk) and open it again."
    else:
        # One line, without SQLAlchemy's "(Background on this error at: …)" link.
        why = " ".join(str(exc).split("\n(Background on this error")[0].split())
        why = why or type(exc).__name__
        advice = (
            "Open it with the MeaningBench version that wrote it, or report this message "
            "to the MeaningBench developers."
        )
    return (
        f"{path}: upgrading the study from schema {rev} to {SCHEMA_HEAD} failed ({why}); "
        f"the study was left as it was, and the copy made before the upgrade is "
        f"{backup}. {advice}"
    )


def _open_read_only(path: Path, access: StudyAccess) -> Study:
    """A study opened for reading only; see meaningbench.db.access for `mode=ro` versus `immutable`."""
    failure: BaseException | None = None
    for uri in read_only_uris(path):
        engine = make_read_only_engine(uri)
        try:
            rev = current_revision(engine)
            break
        except Exception as exc:
            engine.dispose()
            failure = exc
    else:
        assert failure is not None
        raise _open_error(path, failure)
    if rev is None:
        engine.dispose()
        raise StudyFileError(f"{path}: an SQLite file, but not a MeaningBench study")
    if rev != SCHEMA_HEAD:
        engine.dispose()
        if rev not in known_revisions():
            raise NewerSchemaError(_newer_message(path, rev))
        raise StudyReadOnlyError(
            f"{path}: this study was written by an older MeaningBench (schema {rev}) and "
            f"must be upgraded before it can be opened, but it is read-only "
            f"({access.reason}); nothing was changed. Copy it to a writable folder and open "
            "the copy."
        )
    return Study(
        path=path,
        engine=engine,
        _factory=make_sessionmaker(engine),
        read_only=True,
        read_only_reason=access.reason,
    )


def publish_study(built: Path, dest: Path) -> Path:
    """Give a closed study built under a hidden partial name its real name, `dest`.

    Studies made by one command (an import into a new study) are built aside, so that a
    kill at any point leaves no empty or half-made study under the name the user chose.
    Never replaces a file that appeared at `dest` meanwhile.
    """
    if Path(f"{built}-wal").exists():
        # Closing the last connection normally checkpoints and deletes the log; make sure
        # every committed page is in the main file before it is renamed without its log.
        conn = sqlite3.connect(str(built))
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    try:
        os.link(built, dest)  # fails, rather than replaces, when dest exists
    except FileExistsError:
        raise StudyFileError(
            f"{dest}: another program created this file while the import ran; the import "
            "was not saved. Run it again to import into that study."
        ) from None
    except OSError:  # no hard links here (FAT, some network shares)
        if dest.exists():
            raise StudyFileError(
                f"{dest}: another program created this file while the import ran; the "
                "import was not saved. Run it again to import into that study."
            ) from None
        os.replace(built, dest)
    remove_study_files(built)
    return dest


def copy_study(src: str | Path, dest: str | Path) -> Path:
    """A consistent copy of a study (its write-ahead log included), made through SQLite's
    backup API: the source file is never opened outside SQLite (see `open_study`)."""
    dest = Path(dest)
    sqlite_copy(Path(src), dest, mode="ro")
    return dest


def sqlite_copy(src: Path, dest: Path, *, mode: str) -> None:
    """Copy a study into `dest` through SQLite's backup API (the write-ahead log included),
    opening `src` with the URI `mode` (`ro`, or `rw` where a read-only last connection would
    leave the -wal and -shm behind)."""
    source = sqlite3.connect(f"{src.resolve().as_uri()}?mode={mode}", uri=True)
    study_files.leave_log_if_guest(source)
    try:
        target = sqlite3.connect(str(dest))
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()
