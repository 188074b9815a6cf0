"""An HTTP provider's settings, read from the environment (only in its `create` factory).

Each setting has a list of variable names, first non-blank one wins (`RUNLENS_*` before the
SDK's own name), and a default; a value that is set but unusable is a `UserError` naming the
variable:

    base URL         the provider's variables, e.g. RUNLENS_OPENAI_BASE_URL / OPENAI_BASE_URL
    API key          the provider's variables, e.g. RUNLENS_OPENAI_API_KEY / OPENAI_API_KEY
    timeout          RUNLENS_MODEL_TIMEOUT, seconds per request
    max_tokens       RUNLENS_MAX_TOKENS
    response cap     RUNLENS_MODEL_MAX_RESPONSE_BYTES, default 16 MiB
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runlens.errors import UserError
from runlens.models._body import DEFAULT_MAX_RESPONSE_BYTES

#: Seconds one request may take, reading the answer included, unless RUNLENS_MODEL_TIMEOUT says.
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class HttpSettings:
    """What an HTTP provider needs besides the model name; `api_key` None when unset."""

    base_url: str
    api_key: str | None
    timeout: float
    max_tokens: int | None
    max_response_bytes: int


def http_settings(
    env: Mapping[str, str],
    *,
    base_url_env: Sequence[str],
    api_key_env: Sequence[str],
    default_base_url: str,
    default_max_tokens: int | None,
) -> HttpSettings:
    """The settings in `env` for a provider reading `base_url_env` and `api_key_env`."""
    return HttpSettings(
        base_url=env_text(env, *base_url_env) or default_base_url,
        api_key=env_text(env, *api_key_env),
        timeout=env_positive_float(env, "RUNLENS_MODEL_TIMEOUT", DEFAULT_TIMEOUT),
        max_tokens=env_positive_int(env, "RUNLENS_MAX_TOKENS", default_max_tokens),
        max_response_bytes=env_max_response_bytes(env),
    )


def env_text(env: Mapping[str, str], *names: str) -> str | None:
    """The first of `names` set to a non-blank value in `env`, stripped."""
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def env_positive_float(env: Mapping[str, str], name: str, default: float) -> float:
    """A positive number from `env[name]`, or `default` when unset; UserError when invalid."""
    value = env_text(env, name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise UserError(f"{name} must be a positive number of seconds, not {value!r}")
    return number


def env_max_response_bytes(env: Mapping[str, str]) -> int:
    """`RUNLENS_MODEL_MAX_RESPONSE_BYTES`: the cap on a response body, default 16 MiB."""
    value = env_positive_int(env, "RUNLENS_MODEL_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES)
    return DEFAULT_MAX_RESPONSE_BYTES if value is None else value


def env_positive_int(env: Mapping[str, str], name: str, default: int | None) -> int | None:
    """A positive integer from `env[name]`, or `default` when unset; UserError when invalid."""
    value = env_text(env, name)
    if value is None:
        return default
    # ASCII digits only: "²" passes isdigit() and int() refuses it.
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise UserError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def require_model_name(provider: str, name: str, example: str) -> str:
    """The model name after `provider:`, or a UserError showing a correct spec."""
    if not name.strip():
        raise UserError(f"{provider} needs a model name: --model {provider}:{example}")
    return name.strip()
