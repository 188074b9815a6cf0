"""The rules every request to `runlens ui` passes before it reaches a page or the API.

One ASGI middleware, `SecurityMiddleware`, wrapped around the whole application (pages, API,
`/static`, `/openapi.json`), applies them in this order:

1. **Host allow-list** (DNS rebinding). A page on `evil.example` whose name the attacker
   re-points at 127.0.0.1 reaches the server with `Host: evil.example`; only the loopback
   names and the bound host are accepted (any host when bound to a wildcard address, which
   requires a token). Refused with 400.
2. **Token** (when `RUNLENS_UI_TOKEN` is set, on loopback too): `Authorization: Bearer T`, or
   the session cookie, or `?token=T` once, which sets the cookie (HttpOnly, SameSite=Strict)
   and redirects to the same URL without the token, so it leaves the address bar and the
   history. Refused with 401: JSON for `/api/...` and `/openapi.json`, a short HTML page
   otherwise.

   Browsers send a host's cookies to every port of it, so the session is bound to this
   server: its name carries the port the server listens on (`runlens_session_8765`;
   `__Host-runlens_session_8765`, `Secure`, over HTTPS), and its value is
   `<issued>.<HMAC>` keyed by a secret this server process drew at start, over the token,
   the server's own origin (scheme, `Host`, listening port) and the time it was issued. A
   cookie of another server (another port, or this one before a restart) or one older than
   `SESSION_MAX_AGE` is no session; the token itself is never in it.
3. **Cross-site writes** (CSRF). A request with an unsafe method (POST, PUT, PATCH, DELETE)
   is refused with 403 when the browser says it comes from another site or origin
   (`Sec-Fetch-Site` other than `same-origin`/`none`, or an `Origin` that is not this
   server's; `Origin: null` only with `Sec-Fetch-Site: same-origin`, which is how a page's
   own form posts under `no-referrer`). Clients that send neither header (curl, scripts)
   are not browsers and pass.
4. **Headers on every response**, refusals included: a strict Content-Security-Policy (no
   inline scripts or styles, nothing from other origins, no framing), `nosniff`,
   `no-referrer`, and `no-store` caching for everything but `/static`. A response that sets
   its own policy keeps it: raw artifacts are served with `sandbox` added (see
   `RAW_ARTIFACT_CSP`), so an HTML or SVG file a model wrote runs nothing even when opened
   directly.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The policy of every page and API response.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
#: The policy of a raw artifact: the same, in a sandbox (no scripts, no same-origin access).
RAW_ARTIFACT_CSP = f"sandbox; {CSP}"
#: The start of the session cookie's name (`session_cookie_name` adds the server's port).
SESSION_COOKIE = "runlens_session"
#: Seconds a session cookie is good for (then `?token=` again).
SESSION_MAX_AGE = 12 * 60 * 60

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]", "::1")
_WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
_COMMON_HEADERS: tuple[tuple[str, str], ...] = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)


def is_loopback(host: str) -> bool:
    """Whether binding `host` only serves this machine (`127.0.0.0/8`, `::1`, `localhost`)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(bound_host: str) -> frozenset[str] | None:
    """The `Host` names a server bound to `bound_host` answers to; None means any (a
    wildcard bind serves every name the machine has, and needs a token)."""
    if bound_host in _WILDCARD_HOSTS:
        return None
    names = {name.lower() for name in _LOOPBACK_NAMES}
    bound = bound_host.lower()
    names.add(f"[{bound}]" if ":" in bound and not bound.startswith("[") else bound)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class SecuritySettings:
    """What the middleware enforces: `token` None means no token is asked for."""

    token: str | None
    hosts: frozenset[str] | None


def session_cookie_name(port: int | None, *, secure: bool = False) -> str:
    """The session cookie's name on a server listening on `port` (`__Host-` over HTTPS,
    where browsers then refuse it from anything but this host, over HTTPS, for path /)."""
    name = f"{SESSION_COOKIE}_{port}" if port else SESSION_COOKIE
    return f"__Host-{name}" if secure else name


class SecurityMiddleware:
    """The request rules and response headers described in the module docstring."""

    def __init__(self, app: ASGIApp, settings: SecuritySettings) -> None:
        self.app = app
        self.settings = settings
        #: Drawn per server process: no other server, nor this one restarted, can mint or
        #: accept this one's sessions.
        self._secret = secrets.token_bytes(32)
        self._session = settings.token is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        send = _with_headers(send, cache=not path.startswith("/static/"))
        headers = Headers(scope=scope)
        refusal = self._refusal(scope, headers, path)
        if refusal is not None:
            await refusal(send)
            return
        token, query_token = self.settings.token, _query_token(scope)
        if token is not None and query_token is not None and _same(query_token, token):
            await self._redeem_query_token(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: Headers, path: str) -> _Reply | None:
        host = headers.get("host", "")
        if not _host_allowed(host, self.settings.hosts):
            return _json_reply(
                400,
                f"Host header {host!r} is not allowed: this server answers to "
                f"{', '.join(sorted(self.settings.hosts or ()))} (DNS rebinding protection)",
            )
        if self._session and not self._authorised(scope, headers):
            return _unauthorised(path)
        if scope["method"] not in _SAFE_METHODS:
            problem = _cross_site_problem(headers, scheme=scope.get("scheme", "http"), host=host)
            if problem is not None:
                return _json_reply(403, f"cross-site request refused: {problem}")
        return None

    def _authorised(self, scope: Scope, headers: Headers) -> bool:
        token = self.settings.token
        assert token is not None
        scheme, _, credentials = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and credentials:
            return _same(credentials.strip(), token)
        query_token = _query_token(scope)
        if query_token is not None:
            return _same(query_token, token)
        cookie = _cookie(headers, self._cookie_name(scope))
        return cookie is not None and self._valid_session(scope, headers, cookie)

    def _cookie_name(self, scope: Scope) -> str:
        return session_cookie_name(_listening_port(scope), secure=_secure(scope))

    def _session_mac(self, scope: Scope, headers: Headers, issued: int) -> str:
        """The HMAC a session issued at `issued` carries on this server, for this origin."""
        assert self.settings.token is not None
        origin = f"{scope.get('scheme', 'http')}://{headers.get('host', '').lower()}"
        message = "\n".join(
            ["runlens-ui-session", self.settings.token, origin, str(_listening_port(scope)),
             str(issued)]
        )  # fmt: skip
        return hmac.new(self._secret, message.encode("utf-8"), hashlib.sha256).hexdigest()

    def _session_value(self, scope: Scope, headers: Headers) -> str:
        issued = int(time.time())
        return f"{issued}.{self._session_mac(scope, headers, issued)}"

    def _valid_session(self, scope: Scope, headers: Headers, value: str) -> bool:
        issued_text, _, mac = value.partition(".")
        if not issued_text.isascii() or not issued_text.isdigit() or len(issued_text) > 12:
            return False
        issued = int(issued_text)
        if not 0 <= time.time() - issued <= SESSION_MAX_AGE:
            return False
        return _same(mac, self._session_mac(scope, headers, issued))

    async def _redeem_query_token(self, scope: Scope, receive: Receive, send: Send) -> None:
        """`?token=T`, the right token: set the session cookie; for a GET or HEAD, redirect to
        the same URL without the token; any other request goes on with the cookie set."""
        headers = Headers(scope=scope)
        cookie = (
            f"{self._cookie_name(scope)}={self._session_value(scope, headers)}; Path=/; "
            f"Max-Age={SESSION_MAX_AGE}; HttpOnly; SameSite=Strict"
            + ("; Secure" if _secure(scope) else "")
        )
        if scope["method"] in {"GET", "HEAD"}:
            query = urlencode(
                [
                    (key, value)
                    for key, value in parse_qsl(
                        scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True
                    )
                    if key != "token"
                ]
            )
            raw_path = scope.get("raw_path") or quote(scope["path"]).encode()
            location = raw_path.decode("latin-1") + (f"?{query}" if query else "")
            await _Reply(
                303,
                b"",
                "text/plain; charset=utf-8",
                (("location", _safe_location(location)), ("set-cookie", cookie)),
            )(send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("set-cookie", cookie)
            await send(message)

        await self.app(scope, receive, send_with_cookie)


class ReviewerSessions:
    """The values of the `runlens_reviewer` cookie a reviewer's sign-in sets:
    `<issued>.<token sha256>.<HMAC>`, keyed by a secret drawn per server process, so the
    reviewer's token itself is never in a cookie, and a cookie of another server (or of
    this one before a restart) or older than `max_age` seconds names no one."""

    def __init__(self, max_age: int = SESSION_MAX_AGE) -> None:
        self._secret = secrets.token_bytes(32)
        self.max_age = max_age

    def _mac(self, digest: str, issued: int) -> str:
        message = f"runlens-reviewer\n{digest}\n{issued}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def issue(self, digest: str) -> str:
        """The cookie value of the reviewer whose token has SHA-256 `digest`."""
        issued = int(time.time())
        return f"{issued}.{digest}.{self._mac(digest, issued)}"

    def digest_of(self, value: str) -> str | None:
        """The token digest a cookie value carries, when this server issued it lately."""
        issued_text, _, rest = value.partition(".")
        digest, _, mac = rest.partition(".")
        if not issued_text.isascii() or not issued_text.isdigit() or len(issued_text) > 12:
            return None
        if len(digest) != 64 or not digest.isascii() or not digest.isalnum():
            return None
        issued = int(issued_text)
        if not 0 <= time.time() - issued <= self.max_age:
            return None
        return digest if _same(mac, self._mac(digest, issued)) else None


@dataclass(frozen=True, slots=True)
class _Reply:
    """A complete response the middleware sends itself."""

    status: int
    body: bytes
    media_type: str
    extra: Iterable[tuple[str, str]] = ()

    async def __call__(self, send: Send) -> None:
        headers = [
            (b"content-type", self.media_type.encode()),
            (b"content-length", str(len(self.body)).encode()),
            *((name.encode(), value.encode("latin-1")) for name, value in self.extra),
        ]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def _json_reply(status: int, detail: str, extra: Iterable[tuple[str, str]] = ()) -> _Reply:
    body = json.dumps({"detail": detail}, ensure_ascii=False).encode()
    return _Reply(status, body, "application/json", extra)


def _unauthorised(path: str) -> _Reply:
    detail = (
        "a token is required: send 'Authorization: Bearer <RUNLENS_UI_TOKEN>', or open the "
        "page once with ?token=<RUNLENS_UI_TOKEN>"
    )
    challenge = (("www-authenticate", 'Bearer realm="runlens"'),)
    if path.startswith("/api/") or path == "/api" or path == "/openapi.json":
        return _json_reply(401, detail, challenge)
    page = (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>RunLens: token "
        f"required</title></head><body><h1>Token required</h1><p>{escape(detail)}</p>"
        "</body></html>"
    )
    return _Reply(401, page.encode(), "text/html; charset=utf-8", challenge)


def _with_headers(send: Send, *, cache: bool) -> Send:
    """`send` that adds the common headers (and the CSP, unless the response set its own)."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            if "content-security-policy" not in headers:
                headers["content-security-policy"] = CSP
            for name, value in _COMMON_HEADERS:
                headers[name] = value
            if cache and "cache-control" not in headers:
                headers["cache-control"] = "no-store"
        await send(message)

    return wrapped


def _host_allowed(host: str, hosts: frozenset[str] | None) -> bool:
    if hosts is None:
        return bool(host)
    name = host.strip().lower()
    if name.startswith("["):  # [::1]:8765
        name = name[: name.find("]") + 1] if "]" in name else name
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return name in hosts


def _cross_site_problem(headers: Headers, *, scheme: str, host: str) -> str | None:
    """Why an unsafe request looks cross-site, or None."""
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in {"same-origin", "none"}:
        return f"Sec-Fetch-Site is {fetch_site!r} (only same-origin requests may change state)"
    origin = headers.get("origin")
    if origin == "null" and fetch_site == "same-origin":
        # A page's own form under `Referrer-Policy: no-referrer`: the browser hides the
        # origin (`null`) but says the request is same-origin (a header no page can set; an
        # opaque origin, such as a sandboxed artifact's, is `cross-site` there).
        return None
    if origin is not None and origin.lower() != f"{scheme}://{host}".lower():
        return f"Origin {origin!r} is not this server ({scheme}://{host})"
    return None


def _query_token(scope: Scope) -> str | None:
    raw: bytes = scope.get("query_string", b"")
    query = raw.decode("latin-1")
    if "token=" not in query:
        return None
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key == "token":
            return value
    return None


def _cookie(headers: Headers, name: str) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(raw)
    except Exception:  # a malformed Cookie header is no session, not a crash
        return None
    morsel = jar.get(name)
    return str(morsel.value) if morsel is not None else None


def _same(given: str, expected: str) -> bool:
    return secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _listening_port(scope: Scope) -> int | None:
    """The port this server accepted the request on (the ASGI `server` address)."""
    server = scope.get("server")
    if isinstance(server, tuple | list) and len(server) == 2 and isinstance(server[1], int):
        return server[1]
    return None


def _secure(scope: Scope) -> bool:
    return scope.get("scheme") in {"https", "wss"}


def _safe_location(location: str) -> str:
    """A redirect target that stays on this server: a path, never `//other.example`."""
    return "/" + location.lstrip("/")


__all__ = [
    "CSP",
    "RAW_ARTIFACT_CSP",
    "SESSION_COOKIE",
    "SESSION_MAX_AGE",
    "ReviewerSessions",
    "SecurityMiddleware",
    "SecuritySettings",
    "allowed_hosts",
    "is_loopback",
    "session_cookie_name",
]
