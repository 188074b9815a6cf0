"""Alembic environment of the run store: run by `runlens.store.db.open_store` (and the tests).

The caller hands over an open connection (`config.attributes["connection"]`), holding the
lock that keeps two processes from migrating one store at once; without one (the `alembic`
command line), the URL of the configuration is used.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from runlens.store.tables import metadata


def _run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = sa.create_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as fresh:
        _run(fresh)
    engine.dispose()


run_migrations_online()
