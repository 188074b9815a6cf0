"""The HTTP providers' helpers: redaction, Retry-After, argument parsing, settings."""

from __future__ import annotations

import email.utils
import pickle

import httpx
import pytest

from runlens._text import clean_text, escape_surrogates
from runlens.errors import ProviderCallError, UserError
from runlens.models._body import excerpt, format_size
from runlens.models._http import endpoint_label
from runlens.models._settings import (
    env_positive_float,
    env_positive_int,
    env_text,
    http_settings,
    require_model_name,
)
from runlens.models._tool_calls import parse_arguments
from runlens.models._wire_errors import error_detail, parse_retry_after
from runlens.secrets import REDACTED, redact, redactor
from runlens.testing import response_from_turn


class TestRedact:
    def test_known_secrets_are_masked_wherever_they_occur(self) -> None:
        text = "key=local-key-123 again local-key-123"
        assert redact(text, ["local-key-123"]) == f"key={REDACTED} again {REDACTED}"

    def test_longer_secret_is_masked_whole_when_one_contains_another(self) -> None:
        assert redact("abcdef-ghij", ["abcdef", "abcdef-ghij"]) == REDACTED

    def test_key_shapes_are_masked_without_being_told(self) -> None:
        text = (
            "Incorrect API key provided: sk-proj-AbCdEfGh1234567890XyZ. Or sk-ant-api03-abcdefghij"
        )
        masked = redact(text)
        assert "AbCdEfGh" not in masked
        assert "api03" not in masked
        assert masked.startswith("Incorrect API key provided: ")

    def test_bearer_tokens_are_masked_but_the_word_kept(self) -> None:
        assert (
            redact("Authorization: Bearer abc.def-ghi_jkl") == f"Authorization: Bearer {REDACTED}"
        )

    def test_none_empty_and_tiny_secrets_leave_text_alone(self) -> None:
        assert redact("a b c", [None, "", "b"]) == "a b c"

    def test_the_runs_redactor_masks_known_values_only(self) -> None:
        """The records' redactor is the same code, told the keys; it leaves key shapes alone
        (a deliverable may discuss `sk-...` keys) and is None when there is nothing to mask."""
        redact_known = redactor(["local-key-123", None, "tiny"])
        assert redact_known is not None
        text = "local-key-123 and sk-proj-AbCdEfGh1234567890XyZ"
        assert redact_known(text) == f"{REDACTED} and sk-proj-AbCdEfGh1234567890XyZ"
        assert redactor([None, "", "tiny"]) is None


class TestRetryAfter:
    def test_seconds(self) -> None:
        assert parse_retry_after({"Retry-After": "7"}) == 7.0
        assert parse_retry_after({"retry-after": " 1.5 "}) == 1.5

    def test_milliseconds_header_wins(self) -> None:
        assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25

    def test_http_date_is_measured_from_now(self) -> None:
        now = 1_700_000_000.0
        date = email.utils.formatdate(now + 30, usegmt=True)
        assert parse_retry_after({"Retry-After": date}, now=now) == pytest.approx(30.0)

    def test_a_date_in_the_past_means_no_wait(self) -> None:
        now = 1_700_000_000.0
        date = email.utils.formatdate(now - 30, usegmt=True)
        assert parse_retry_after({"Retry-After": date}, now=now) == 0.0

    @pytest.mark.parametrize("value", ["", "soon", "nan", "inf", "1_0", "1e3", "0x10", "\u0661"])
    def test_unparseable_values_are_ignored(self, value: str) -> None:
        assert parse_retry_after({"Retry-After": value}) is None

    def test_negative_seconds_clamp_to_zero(self) -> None:
        assert parse_retry_after({"Retry-After": "-4"}) == 0.0

    def test_absent(self) -> None:
        assert parse_retry_after({}) is None


class TestParseArguments:
    def test_object(self) -> None:
        assert parse_arguments('{"offset": 5}') == ({"offset": 5}, '{"offset": 5}', None)

    def test_empty_string_means_no_arguments(self) -> None:
        assert parse_arguments("") == ({}, "", None)

    def test_invalid_json_keeps_the_raw_text_and_says_why(self) -> None:
        arguments, raw, error = parse_arguments('{"path": "a.json", ')
        assert arguments is None
        assert raw == '{"path": "a.json", '
        assert error is not None and error.startswith("arguments are not valid JSON: ")

    @pytest.mark.parametrize(
        ("raw", "kind"), [("[1, 2]", "an array"), ("42", "a number"), ('"hi"', "a string")]
    )
    def test_json_that_is_not_an_object(self, raw: str, kind: str) -> None:
        assert parse_arguments(raw) == (None, raw, f"arguments must be a JSON object, got {kind}")

    def test_double_encoded_object_is_decoded(self) -> None:
        raw = '"{\\"offset\\": 1}"'
        assert parse_arguments(raw) == ({"offset": 1}, raw, None)

    def test_already_decoded_object(self) -> None:
        assert parse_arguments({"a": "é"}) == ({"a": "é"}, '{"a": "é"}', None)

    @pytest.mark.parametrize(
        "arguments", ['{"offset": 5}', "[1, 2]", '{"a": NaN}', '"{\\"offset\\": 1}"', {"a": 1}, ""]
    )
    def test_a_scripted_turn_reads_arguments_as_a_provider_does(self, arguments: object) -> None:
        turn = {"tool_calls": [{"id": "c1", "name": "read", "arguments": arguments}]}
        (call,) = response_from_turn(turn, 0).tool_calls
        assert (call.arguments, call.raw_arguments, call.arguments_error) == parse_arguments(
            arguments
        )
        assert (call.tool_call_id, call.name) == ("c1", "read")


class TestUntrustedText:
    def test_lone_surrogates_become_u_fffd_and_are_counted(self) -> None:
        assert clean_text("a\ud800b\udfffc") == ("a\ufffdb\ufffdc", 2)
        assert clean_text("plain \ufffd text") == ("plain \ufffd text", 0)

    def test_a_pair_split_in_two_is_joined_not_replaced(self) -> None:
        assert clean_text("\ud83d" + "\ude00") == ("\U0001f600", 0)

    def test_escaped_for_json_text(self) -> None:
        assert escape_surrogates('{"a": "\udc80"}') == '{"a": "\\udc80"}'

    def test_arguments_with_a_lone_surrogate_are_refused_as_sent(self) -> None:
        arguments, raw, error = parse_arguments({"items": [{"text": "x\ud800"}]})
        assert arguments is None
        assert raw == '{"items": [{"text": "x\\ud800"}]}'
        assert error is not None and "lone surrogate \\ud800 in items[0].text" in error

    def test_excerpt_escapes_controls_and_bytes_but_keeps_text(self) -> None:
        assert excerpt("导出\n\x00".encode() + b"\xff") == '"导出\\n\\u0000\\xff"'
        assert excerpt(b"a" * 200, 5) == '"aaaaa"... (200 bytes)'
        assert excerpt("ab导".encode(), 4) == '"ab"... (5 bytes)'  # no half character

    @pytest.mark.parametrize(
        ("size", "text"), [(16 * 1024 * 1024, "16 MiB"), (2048, "2 KiB"), (1000, "1000 bytes")]
    )
    def test_format_size(self, size: int, text: str) -> None:
        assert format_size(size) == text


class TestErrorDetail:
    @pytest.mark.parametrize(
        "payload",
        [
            {"error": {"message": "invalid api key", "type": "auth"}},
            {
                "type": "error",
                "error": {"type": "authentication_error", "message": "invalid api key"},
            },
            {"error": "invalid api key"},
            {"message": "invalid api key"},
        ],
    )
    def test_common_error_shapes(self, payload: object) -> None:
        assert error_detail(httpx.Response(401, json=payload)) == "invalid api key"

    def test_plain_text_body_is_used_whitespace_collapsed_and_shortened(self) -> None:
        detail = error_detail(httpx.Response(502, text="Bad\n  gateway " + "x" * 1000))
        assert detail.startswith("Bad gateway x")
        assert len(detail) == 500 and detail.endswith("...")


class TestMessages:
    def test_message_with_and_without_attempts(self) -> None:
        error = ProviderCallError(
            provider="openai", failure="HTTP 500 Internal Server Error from h:1", detail="boom"
        )
        assert str(error) == "openai: HTTP 500 Internal Server Error from h:1: boom"
        assert str(error.after_attempts(4)) == (
            "openai: HTTP 500 Internal Server Error from h:1 after 4 attempts: boom"
        )
        assert str(error.after_attempts(1)).endswith("after 1 attempt: boom")

    def test_survives_pickling(self) -> None:
        error = ProviderCallError(
            provider="anthropic", failure="HTTP 429", detail="x", status_code=429, retryable=True
        ).after_attempts(2)
        copy = pickle.loads(pickle.dumps(error))
        assert (str(copy), copy.status_code, copy.retryable, copy.attempts) == (
            str(error),
            429,
            True,
            2,
        )

    def test_endpoint_label_has_no_path_or_credentials(self) -> None:
        assert endpoint_label("http://127.0.0.1:8080/v1/chat/completions?k=1") == "127.0.0.1:8080"
        assert endpoint_label("https://user:pw@api.openai.com/v1") == "api.openai.com"


class TestEnvironmentSettings:
    def test_first_non_blank_name_wins(self) -> None:
        env = {"A": "  ", "B": " value ", "C": "other"}
        assert env_text(env, "A", "B", "C") == "value"
        assert env_text(env, "Z") is None

    def test_positive_float(self) -> None:
        assert env_positive_float({}, "T", 120.0) == 120.0
        assert env_positive_float({"T": "2.5"}, "T", 120.0) == 2.5
        for bad in ("0", "-1", "soon", "nan"):
            with pytest.raises(UserError, match="T must be a positive number"):
                env_positive_float({"T": bad}, "T", 1.0)

    def test_positive_int(self) -> None:
        assert env_positive_int({}, "N", 4096) == 4096
        assert env_positive_int({"N": "512"}, "N", 4096) == 512
        for bad in ("0", "1.5", "-3", "many", "\u00b2", "\u0661\u0662"):
            with pytest.raises(UserError, match="N must be a positive integer"):
                env_positive_int({"N": bad}, "N", 1)

    def test_http_settings_read_every_variable(self) -> None:
        env = {
            "P_BASE_URL": " http://127.0.0.1:9/v1 ",
            "RUNLENS_P_API_KEY": "key-from-runlens",
            "P_API_KEY": "key-from-sdk",
            "RUNLENS_MODEL_TIMEOUT": "7.5",
            "RUNLENS_MODEL_MAX_RESPONSE_BYTES": "2048",
        }
        settings = http_settings(
            env,
            base_url_env=("RUNLENS_P_BASE_URL", "P_BASE_URL"),
            api_key_env=("RUNLENS_P_API_KEY", "P_API_KEY"),
            default_base_url="https://p.example",
            default_max_tokens=None,
        )
        assert settings.base_url == "http://127.0.0.1:9/v1"
        assert settings.api_key == "key-from-runlens"
        assert (settings.timeout, settings.max_tokens, settings.max_response_bytes) == (
            7.5,
            None,
            2048,
        )

    def test_http_settings_defaults(self) -> None:
        settings = http_settings(
            {},
            base_url_env=("P_BASE_URL",),
            api_key_env=("P_API_KEY",),
            default_base_url="https://p.example",
            default_max_tokens=4096,
        )
        assert (settings.base_url, settings.api_key, settings.max_tokens) == (
            "https://p.example",
            None,
            4096,
        )
        assert settings.timeout == 120.0 and settings.max_response_bytes == 16 * 1024 * 1024

    def test_a_blank_model_name_shows_a_correct_spec(self) -> None:
        assert require_model_name("openai", " gpt-x ", "gpt-4o-mini") == "gpt-x"
        with pytest.raises(UserError, match="--model openai:gpt-4o-mini"):
            require_model_name("openai", "  ", "gpt-4o-mini")
