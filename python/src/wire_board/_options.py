"""A follower's options, shared by `Wire.follow` and `AsyncWire.follow`."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from typing_extensions import TypedDict

from ._core import Start
from .errors import WireError


class RetryInfo(NamedTuple):
    """What `on_retry` is told before each wait after a failure."""

    error: WireError
    delay: float
    url: str


class FollowKwargs(TypedDict, total=False):
    """The keyword arguments of `follow` (see `follow_options`)."""

    type: str | None
    tag: str | Iterable[str] | None
    q: str | None
    origin: str | None
    since: str | int | datetime | None
    ref: str | None
    include_expired: bool
    limit: int | None
    cursor: int | None
    cursor_file: str | os.PathLike[str] | None
    on_cursor: Callable[[int], None] | Callable[[int], Awaitable[None]] | None
    start: Start
    wait: float
    dedupe_window: int
    backoff: tuple[float, float]
    min_interval: float
    on_retry: Callable[[RetryInfo], None] | None
    stop: Any


@dataclass(frozen=True)
class FollowOptions:
    query: dict[str, Any]
    cursor: int | None
    cursor_file: str | os.PathLike[str] | None
    on_cursor: Callable[[int], Any] | None
    start: Start
    wait: float
    dedupe_window: int
    backoff: tuple[float, float]
    min_interval: float
    on_retry: Callable[[RetryInfo], None] | None
    #: a threading.Event (sync) or an asyncio.Event (async)
    stop: Any


def follow_options(
    *,
    type: str | None = None,
    tag: str | Iterable[str] | None = None,
    q: str | None = None,
    origin: str | None = None,
    since: str | int | datetime | None = None,
    ref: str | None = None,
    include_expired: bool = False,
    limit: int | None = None,
    cursor: int | None = None,
    cursor_file: str | os.PathLike[str] | None = None,
    on_cursor: Callable[[int], None] | Callable[[int], Awaitable[None]] | None = None,
    start: Start = "newest-page",
    wait: float = 25.0,
    dedupe_window: int = 10_000,
    backoff: tuple[float, float] = (1.0, 30.0),
    min_interval: float = 1.0,
    on_retry: Callable[[RetryInfo], None] | None = None,
    stop: Any = None,
) -> FollowOptions:
    """Every option of `follow`, checked once.

    Filters: `type`, `tag` (a string or several: any of them), `q`, `origin`, `since`, `ref`,
    `include_expired`, `limit` (page size). `cursor`: resume after this feed position; else the one in
    `cursor_file` when it exists; else `start`: `"newest-page"` hands out the newest page first, `"head"`
    starts after it (only what is published from now on). `cursor_file` is written (atomically) and
    `on_cursor` called after every page, once its signals have all been handed out. `wait`: long-poll
    seconds (1..25). `dedupe_window`: signal ids remembered to drop repeats. `backoff`: the least and
    the most seconds to wait after a network error or a 5xx without `Retry-After`. `min_interval`: least
    seconds between two polls that brought nothing. `on_retry(RetryInfo)`: before each wait after a
    failure. `stop`: an Event; once set, the iteration ends (after the poll in flight, in sync code).
    """
    if start not in ("newest-page", "head"):
        raise ValueError(f"start must be 'newest-page' or 'head', not {start!r}")
    if cursor is not None and (not isinstance(cursor, int) or cursor < 0):
        raise ValueError(f"cursor must be a non-negative integer, not {cursor!r}")
    if not 0 < backoff[0] <= backoff[1]:
        raise ValueError(f"backoff must be (least, most) seconds with 0 < least <= most, not {backoff!r}")
    query = dict(
        type=type, tag=tag, q=q, origin=origin, since=since, ref=ref, include_expired=include_expired, limit=limit
    )
    return FollowOptions(
        query, cursor, cursor_file, on_cursor, start, wait, dedupe_window, backoff, min_interval, on_retry, stop
    )
