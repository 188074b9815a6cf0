"""Fixtures for provider tests: a live fault server and models pointed at it.

Async tests run on asyncio through anyio's pytest plugin (anyio ships with httpx).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from fault_server import FaultServer
from provider_kit import KITS, ProviderKit

from runlens.models.base import Model


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    with FaultServer() as server:
        yield server


@pytest.fixture(params=sorted(KITS))
def provider(request: pytest.FixtureRequest) -> ProviderKit:
    return KITS[request.param]


@pytest.fixture
async def make_model(
    provider: ProviderKit, fault_server: FaultServer
) -> AsyncIterator[Callable[..., Model]]:
    """Builds models of the parametrized provider pointed at the fault server; closes them."""
    made: list[Model] = []

    def make(**options: Any) -> Model:
        model = provider.model(fault_server, **options)
        made.append(model)
        return model

    yield make
    for model in made:
        await model.aclose()
