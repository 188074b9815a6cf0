"""`resolve_model` reaches both HTTP providers, configured from the environment only."""

from __future__ import annotations

import pytest
from fault_server import FaultServer
from provider_kit import TEST_KEY, ProviderKit

from runlens.models.messages import UserMessage
from runlens.models.registry import resolve_model

pytestmark = pytest.mark.anyio


async def test_resolve_model_uses_the_environment(
    provider: ProviderKit, fault_server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    prefix = provider.name.upper()
    monkeypatch.setenv(f"{prefix}_BASE_URL", provider.wire.base_url(fault_server))
    monkeypatch.setenv(f"{prefix}_API_KEY", TEST_KEY)
    monkeypatch.setenv("RUNLENS_MODEL_TIMEOUT", "5")
    for name in ("BASE_URL", "API_KEY"):
        monkeypatch.delenv(f"RUNLENS_{prefix}_{name}", raising=False)
    fault_server.enqueue(provider.wire.text("hello"))

    model = resolve_model(f"{provider.name}:some-model")
    try:
        response = await model.complete([UserMessage("hi")], [])
    finally:
        await model.aclose()

    assert model.spec == f"{provider.name}:some-model"
    assert model.provider == provider.name
    assert response.content == "hello"
    assert fault_server.requests[0].json["model"] == "some-model"
