"""Alembic environment: migrations run on the engine handed over by db.study."""

from __future__ import annotations

from alembic import context

from db.models import Base

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
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,  # SQLite alters tables by copying them
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
