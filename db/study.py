"""Creating and opening study files, with schema migrations and a backup before upgrades."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session, sessionmaker

from db.engine import WRITE_OPTION, WaitPolicy, make_engine, make_sessionmaker, set_wait_policy
from db.errors import NewerSchemaError, StudyFileError
from db.models import Dimension

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
# The newest migration's revision. Opening a study at this revision needs no Alembic at all
# (importing it and scanning the scripts costs most of a second); a test keeps it equal to
# the head of db/migrations/versions.
SCHEMA_HEAD = "0004"

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
    """Delete a study file, SQLite's companions (write-ahead log, shared memory, journal)
    and the name of its long writer (see db.writers)."""
    for suffix in ("", "-wal", "-shm", "-journal", "-writer"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def backup_copy(path: Path, tag: str) -> Path:
    """A consistent copy of the study (WAL content included) beside it; returns its path."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    dest = path.with_name(f"{path.name}.bak-{tag}-{stamp}")
    src = sqlite3.connect(str(path))
    try:
        dst = sqlite3.connect(str(dest))
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    return dest


@dataclass
class Study:
    """An open study file. Sessions are per thread: call `session()` where the work runs."""

    path: Path
    engine: Engine
    _factory: sessionmaker[Session] = field(repr=False)
    backup_path: Path | None = None

    @contextmanager
    def session(self, *, write: bool = False) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on any error.

        `write=True` takes the write lock when the transaction begins (BEGIN IMMEDIATE),
        waiting for another process's writes as the wait policy says (see db.engine). A
        transaction that writes should say so: a deferred one that reads first and writes
        later fails at once when another process committed in between.
        """
        with self._factory() as s, s.begin():
            if write:
                s.connection(execution_options={WRITE_OPTION: True})
            yield s

    def set_wait_policy(self, policy: WaitPolicy) -> None:
        """How this study's writes wait for other processes (messages, cancelling)."""
        set_wait_policy(self.engine, policy)

    def close(self) -> None:
        self.engine.dispose()

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


def create_study(path: str | Path) -> Study:
    """Create a new, empty study at `path` (refuses to overwrite an existing file)."""
    path = Path(path)
    if path.exists() and path.stat().st_size > 0:
        raise StudyFileError(f"{path}: a file already exists there")
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(path)
    upgrade_to_head(engine)
    factory = make_sessionmaker(engine)
    _seed_defaults(factory)
    return Study(path=path, engine=engine, _factory=factory)


def open_study(path: str | Path, *, create: bool = False) -> Study:
    """Open a study, upgrading an older schema after a backup copy; refuse a newer one."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        if create:
            return create_study(path)
        raise StudyFileError(f"{path}: no such study")
    # The header is checked by SQLite itself, never by reading the file here: on POSIX,
    # closing any descriptor of a file drops every lock this process holds on it, so a
    # plain open() and close() beside a live connection (a second open of the same study)
    # lets another process checkpoint and delete the write-ahead log under that connection.
    engine = make_engine(path)
    try:
        rev = current_revision(engine)
    except Exception as exc:  # a corrupt file or one locked by a foreign program
        engine.dispose()
        if _is_not_a_database(exc):
            raise StudyFileError(f"{path}: not a MeaningBench study (not an SQLite file)") from None
        raise StudyFileError(f"{path}: cannot open the study ({exc})") from exc
    head = SCHEMA_HEAD
    backup: Path | None = None
    if rev is None:
        engine.dispose()
        raise StudyFileError(f"{path}: an SQLite file, but not a MeaningBench study")
    if rev != head:
        if rev not in known_revisions():
            engine.dispose()
            raise NewerSchemaError(
                f"{path}: this study was written by a newer MeaningBench (schema {rev}); "
                f"this version knows schemas up to {head}. Update MeaningBench to open it."
            )
        engine.dispose()
        backup = backup_copy(path, rev)
        engine = make_engine(path)
        upgrade_to_head(engine)
    factory = make_sessionmaker(engine)
    _seed_defaults(factory)
    return Study(path=path, engine=engine, _factory=factory, backup_path=backup)


def copy_study(src: str | Path, dest: str | Path) -> Path:
    """A consistent copy of a study (its write-ahead log included), made through SQLite's
    backup API: the source file is never opened outside SQLite (see `open_study`)."""
    dest = Path(dest)
    source = sqlite3.connect(f"{Path(src).resolve().as_uri()}?mode=ro", uri=True)
    try:
        target = sqlite3.connect(str(dest))
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()
    return dest
