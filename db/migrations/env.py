"""Alembic environment: migrations run on the engine handed over by meaningbench.db.study."""

from __future__ import annotations

from alembic import context

from meaningbench.db.models import Base

target_metadata = Base.metadata


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        url = context.config.get_main_option("sqlalchemy.url")
        if url is None:
            raise RuntimeError("no engine handed over and no sqlalchemy.url configured")
        from sqlalchemy import create_engine

        engine = create_engine(url)
    with engine.connect() as connection:
        # SQLite alters a table by copying it and dropping the old one; with foreign keys
        # enforced, that drop would cascade-delete every row pointing at the table. The
        # pragma only takes effect outside a transaction, so it is set on the raw
        # connection before SQLAlchemy begins one, and checked and restored after.
        raw = connection.connection.driver_connection
        assert raw is not None
        raw.execute("PRAGMA foreign_keys=OFF")
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,  # SQLite alters tables by copying them
            # SQLite's DDL is transactional, but Alembic assumes not and commits after each
            # migration: a failure in a later step (or in the check below) would leave the
            # study half upgraded. One transaction for the whole upgrade: all or nothing.
            transactional_ddl=True,
        )
        try:
            with context.begin_transaction():
                context.run_migrations()
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").first()
                if broken is not None:
                    raise RuntimeError(f"a migration left a dangling reference: {tuple(broken)}")
            connection.commit()
        finally:
            raw.execute("PRAGMA foreign_keys=ON")


run_migrations_online()
