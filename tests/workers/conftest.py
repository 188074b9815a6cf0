"""Real `runlens worker` processes against the machine's PostgreSQL (or SQLite), each test with a
fresh schema for the store and one for the queue (`<schema>_dbos`), dropped after.

These tests need PostgreSQL at 127.0.0.1:5432 (database `test`, user `postgres`, trust auth;
`RUNLENS_TEST_POSTGRES` names another): without it they fail, saying so.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from workers.cluster import Cluster, make_cluster

POSTGRES = os.environ.get(
    "RUNLENS_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[sa.Engine]:
    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        pytest.fail(f"the worker tests need PostgreSQL at {POSTGRES}: {error.orig}")
    yield engine
    engine.dispose()


@pytest.fixture
def postgres_url(postgres_server: sa.Engine) -> Iterator[str]:
    schema = f"rlw_{secrets.token_hex(5)}"
    with postgres_server.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    yield f"{POSTGRES}?options=-csearch_path%3D{schema}"
    with postgres_server.begin() as connection:
        connection.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        connection.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}_dbos" CASCADE'))


@pytest.fixture
def pg_cluster(tmp_path: Path, postgres_url: str) -> Iterator[Cluster]:
    cluster = make_cluster(tmp_path, postgres_url)
    yield cluster
    cluster.stop()
