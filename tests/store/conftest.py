"""The run store on both engines: SQLite in a temporary folder, and PostgreSQL at
127.0.0.1:5432 (database `test`, user `postgres`), each test in a fresh schema dropped after.

`store_url` is parametrized over the two; a test that needs one engine asks for
`sqlite_url` or `postgres_url`. Without a reachable PostgreSQL the PostgreSQL cases are
skipped, saying why (`RUNLENS_TEST_POSTGRES` names another server).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from runlens.store import RunStore, open_store

POSTGRES = os.environ.get(
    "RUNLENS_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def postgres_server() -> sa.Engine:
    engine = sa.create_engine(POSTGRES, connect_args={"connect_timeout": 5})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as error:
        engine.dispose()
        pytest.skip(f"no PostgreSQL at {POSTGRES}: {error.orig}")
    return engine


@pytest.fixture
def postgres_url(postgres_server: sa.Engine) -> Iterator[str]:
    """A fresh schema `rl_<hex>`; the URL puts it first on the search path."""
    schema = f"rl_{secrets.token_hex(6)}"
    with postgres_server.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    yield f"{POSTGRES}?options=-csearch_path%3D{schema}"
    with postgres_server.begin() as connection:
        connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store' / 'runlens.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest) -> str:
    url: str = request.getfixturevalue(
        f"{'postgres' if request.param != 'sqlite' else 'sqlite'}_url"
    )
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[RunStore]:
    opened = open_store(store_url)
    yield opened
    opened.close()
