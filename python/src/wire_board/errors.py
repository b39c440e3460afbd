"""Every failure as a `WireError`, one subclass per protocol error code (docs/protocol.md "Errors")."""

from __future__ import annotations

import re
import time
from email.utils import parsedate_to_datetime
from typing import Any

import httpx


class WireError(Exception):
    """A refused or failed call: the protocol's `code`, the HTTP `status` (0 when no answer came: refused,
    reset, timed out), the board's `message` and `details`, and `retry_after` seconds when the board sent
    `Retry-After`."""

    #: The protocol's error code (docs/protocol.md "Errors").
    code: str = "internal"

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        details: dict[str, Any] | None = None,
        retry_after: float | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.details = details
        self.retry_after = retry_after
        if code is not None and code != type(self).code:
            self.code = code  # a code newer than this library: the base class, with the board's code

    @property
    def retryable(self) -> bool:
        """Worth trying again later: no answer, 429, or a 5xx other than 501 (admin disabled)."""
        return self.status == 0 or self.status == 429 or (self.status >= 500 and self.status != 501)

    def __str__(self) -> str:
        return f"{self.code} ({self.status}): {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status}, retry_after={self.retry_after})"


class InvalidRequest(WireError):
    code = "invalid_request"


class PayloadTooLarge(WireError):
    code = "payload_too_large"


class ReplyRequiresRef(InvalidRequest):
    code = "reply_requires_ref"


class Unauthorized(WireError):
    code = "unauthorized"


class InsufficientStanding(WireError):
    code = "insufficient_standing"


class Forbidden(WireError):
    code = "forbidden"


class UnverifiedLimited(Forbidden):
    code = "unverified_limited"


class RateLimited(WireError):
    code = "rate_limited"


class AdminDisabled(WireError):
    code = "admin_disabled"


class NotFound(WireError):
    code = "not_found"


class MethodNotAllowed(WireError):
    code = "method_not_allowed"


class Unavailable(WireError):
    """503, 502, 504, or no answer at all (`status` 0)."""

    code = "unavailable"


class InternalError(WireError):
    code = "internal"


ERRORS: dict[str, type[WireError]] = {
    c.code: c
    for c in (
        InvalidRequest,
        PayloadTooLarge,
        ReplyRequiresRef,
        Unauthorized,
        InsufficientStanding,
        UnverifiedLimited,
        Forbidden,
        RateLimited,
        AdminDisabled,
        NotFound,
        MethodNotAllowed,
        Unavailable,
        InternalError,
    )
}

_BY_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    402: "insufficient_standing",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    429: "rate_limited",
    501: "admin_disabled",
    502: "unavailable",
    503: "unavailable",
    504: "unavailable",
}

_SECONDS = re.compile(r"\d{1,9}(\.\d{1,3})?")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds (delta-seconds or an HTTP date), or None when absent or unreadable."""
    if value is None or len(value) > 64:
        return None
    v = value.strip()
    if _SECONDS.fullmatch(v):
        return float(v)
    try:
        at = parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


def error_from_response(res: httpx.Response) -> WireError:
    """A non-2xx answer as the `WireError` subclass of its code, from the `{"error": {...}}` body when there is one."""
    try:
        body: Any = res.json()
    except ValueError:
        body = None
    e = body.get("error") if isinstance(body, dict) else None
    e = e if isinstance(e, dict) else {}
    code = e.get("code")
    if not isinstance(code, str) or not code:
        code = _BY_STATUS.get(res.status_code, "internal" if res.status_code >= 500 else "invalid_request")
    msg, det = e.get("message"), e.get("details")
    message = msg if isinstance(msg, str) else f"HTTP {res.status_code}"
    details = det if isinstance(det, dict) else None
    cls = ERRORS.get(code, WireError)
    return cls(
        message,
        status=res.status_code,
        details=details,
        retry_after=parse_retry_after(res.headers.get("retry-after")),
        code=code,
    )
