"""One HTTP exchange, described without I/O: what to send, and how an answer becomes a model or a
`WireError`. The sync and async clients each add the one line that sends it."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from .errors import InternalError, Unavailable, WireError, error_from_response
from .models import Draft

M = TypeVar("M", bound=BaseModel)

USER_AGENT = "wire-board-python/0.1.0"


@dataclass(frozen=True)
class Call:
    method: str
    url: str
    params: list[tuple[str, str]] = field(default_factory=list)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    timeout: httpx.Timeout | None = None


def base_urls(url: str | Sequence[str]) -> list[str]:
    urls = [url] if isinstance(url, str) else list(url)
    out = [u.rstrip("/") for u in urls if u.strip()]
    if not out:
        raise ValueError("a Wire client needs at least one url")
    return out


def seg(sid: str) -> str:
    """A signal id or `sw://` URI as one path segment."""
    return quote(sid.strip(), safe="")


def headers(token: str | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    h = {"accept": "application/json", "user-agent": USER_AGENT}
    if token:
        h["authorization"] = f"Bearer {token}"
    if extra:
        h.update(extra)
    return h


def draft_body(
    type_: str,
    *,
    tags: Iterable[str] | None,
    ttl: int | None,
    ref: str | None,
    payload: Mapping[str, Any],
) -> dict[str, Any]:
    """The flat publish body. Payload keys starting with `$` are refused: they would be read as envelope."""
    bad = [k for k in payload if k.startswith("$")]
    if bad:
        raise ValueError(f"payload keys may not start with '$' (the envelope's): {bad}; use tags=, ttl=, ref=")
    d = Draft.model_validate(
        {"$type": type_, "$tags": None if tags is None else list(tags), "$ttl": ttl, "$refId": ref, **payload}
    )
    return d.body()


def new_idempotency_key() -> str:
    return f"wire-py-{uuid.uuid4().hex}"


#: The most bytes of one answer a client reads (decoded), unless told otherwise: a board is a stranger.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
_HOP = ("content-encoding", "content-length", "transfer-encoding")


def too_large(call: Call, limit: int, status: int) -> WireError:
    return InternalError(f"{call.url}: the answer is larger than {limit} bytes", status=status)


def buffered(res: httpx.Response, body: bytes) -> httpx.Response:
    """The streamed answer as a plain Response holding its decoded body."""
    headers = [(k, v) for k, v in res.headers.multi_items() if k.lower() not in _HOP]
    return httpx.Response(res.status_code, headers=headers, content=body, request=res.request)


def transport_error(call: Call, err: httpx.HTTPError) -> WireError:
    """No answer: refused, reset, DNS, or the read timeout."""
    what = "no answer in time" if isinstance(err, httpx.TimeoutException) else (str(err) or type(err).__name__)
    return Unavailable(f"{call.url}: {what}", status=0)


def parse(res: httpx.Response, model: type[M]) -> M:
    if not res.is_success:
        raise error_from_response(res)
    try:
        return model.model_validate_json(res.content)
    except ValidationError as e:
        raise InternalError(
            f"{res.request.url}: an answer that is not a {model.__name__}: {e}", status=res.status_code
        ) from e


def parse_json(res: httpx.Response) -> Any:
    if not res.is_success:
        raise error_from_response(res)
    try:
        return res.json() if res.content else None
    except ValueError as e:
        raise InternalError(f"{res.request.url}: the answer is not JSON", status=res.status_code) from e
