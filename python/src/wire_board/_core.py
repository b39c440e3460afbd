"""What the sync and the async client share, without I/O: the query string, the delays, the dedupe
window, and the follower's state (one poll's parameters in, one page's fresh signals out)."""

from __future__ import annotations

import os
import random as _random
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from .errors import WireError
from .models import Signal, SignalPage

#: The longest `Retry-After` a client obeys (a board asking for more is capped).
MAX_RETRY_AFTER = 15 * 60.0
#: Seconds a long-poll's read may take beyond its `wait` before the client gives up on it.
WAIT_MARGIN = 15.0
MAX_WAIT = 25.0

Params = list[tuple[str, str]]
Start = Literal["newest-page", "head"]


def read_params(
    *,
    cursor: int | None = None,
    wait: float | None = None,
    limit: int | None = None,
    type: str | None = None,
    tag: str | Iterable[str] | None = None,
    q: str | None = None,
    origin: str | None = None,
    since: str | int | datetime | None = None,
    ref: str | None = None,
    include_expired: bool = False,
) -> Params:
    """The read parameters of `GET /sw/signals` as a query (`tag` repeated for several tags)."""
    out: Params = []
    if cursor is not None:
        out.append(("cursor", str(int(cursor))))
    if wait is not None:
        out.append(("wait", _num(wait)))
    if limit is not None:
        out.append(("limit", str(int(limit))))
    for k, v in (("type", type), ("q", q), ("origin", origin), ("ref", ref)):
        if v is not None:
            out.append((k, v))
    if tag is not None:
        out.extend(("tag", t) for t in ([tag] if isinstance(tag, str) else tag))
    if since is not None:
        if isinstance(since, datetime):
            since = since.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out.append(("since", str(since)))
    if include_expired:
        out.append(("includeExpired", "1"))
    return out


def _num(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".")


def backoff_delay(
    attempt: int, low: float = 1.0, high: float = 30.0, random: Callable[[], float] = _random.random
) -> float:
    """Delay before retry number `attempt` (0-based): doubling from `low` to `high` seconds, with
    "equal jitter" (between half the step and the step, never below `low`), so a crowd of followers
    spreads out and no retry is immediate."""
    step = min(high, low * 2.0 ** min(attempt + 1, 30))
    floor = max(low, step / 2)
    return floor + random() * (step - floor)


def retry_delay(
    err: WireError, attempt: int, low: float = 1.0, high: float = 30.0, random: Callable[[], float] = _random.random
) -> float:
    """`Retry-After` as told on 429 and 503 (plus up to 10 % jitter, at most 1 s; capped at 15 minutes),
    else exponential backoff."""
    if err.retry_after is not None and err.status in (429, 503):
        told = min(MAX_RETRY_AFTER, err.retry_after)
        return max(told, 0.1) + random() * min(1.0, told / 10)
    return backoff_delay(attempt, low, high, random)


class SeenIds:
    """The ids a follower has handed out, the oldest forgotten first once `size` are held."""

    def __init__(self, size: int) -> None:
        self._max = max(1, size)
        self._ids: OrderedDict[str, None] = OrderedDict()

    def add(self, sid: str) -> bool:
        """True when the id is new (and now remembered)."""
        if sid in self._ids:
            return False
        self._ids[sid] = None
        if len(self._ids) > self._max:
            self._ids.popitem(last=False)
        return True

    def __len__(self) -> int:
        return len(self._ids)


def read_cursor_file(path: str | os.PathLike[str]) -> int | None:
    """The cursor a file holds, or None when the file does not exist. Anything else in it is an error:
    starting over from the newest page would skip or repeat signals without a word."""
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if not text.isdigit():
        raise ValueError(f"{path}: not a cursor (a non-negative integer): {text[:40]!r}")
    return int(text)


def write_cursor_file(path: str | os.PathLike[str], cursor: int) -> None:
    """Writes the cursor atomically: a temporary file beside it, flushed, then renamed over it."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(f"{cursor}\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class FollowState:
    """One follower's position and memory; the sync and async loops drive it."""

    query: Mapping[str, Any]
    cursor: int | None = None
    start: Start = "newest-page"
    wait: float = MAX_WAIT
    dedupe_window: int = 10_000
    backoff: tuple[float, float] = (1.0, 30.0)
    #: A monotonic time after which no poll starts (request()'s timeout).
    deadline: float | None = None
    failures: int = 0
    seen: SeenIds = field(init=False)

    def __post_init__(self) -> None:
        self.wait = min(MAX_WAIT, max(1.0, self.wait))
        self.seen = SeenIds(self.dedupe_window)

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    @property
    def head_only(self) -> bool:
        return self.cursor is None and self.start == "head"

    def params(self) -> tuple[Params, float]:
        """The next poll's query and its read timeout. Without a cursor: the newest page (one signal
        when only the head is wanted); with one: a long-poll after it."""
        if self.cursor is None:
            q = dict(self.query)
            if self.head_only:
                q["limit"] = 1
            return read_params(**q), WAIT_MARGIN + 15.0
        wait = self.wait
        left = self.remaining()
        if left is not None:
            wait = max(0.0, min(wait, left))
        return read_params(**self.query, cursor=self.cursor, wait=wait), wait + WAIT_MARGIN

    def failed(self, err: WireError) -> float:
        """The delay before the next poll after `err`, which is re-raised when retrying cannot help."""
        if not err.retryable:
            raise err
        delay = retry_delay(err, self.failures, *self.backoff)
        self.failures += 1
        return delay

    def page(self, page: SignalPage) -> list[Signal]:
        """The page's signals not handed out before and not expired (by the board's clock). The
        caller hands them out, then calls `advance`."""
        self.failures = 0
        if self.head_only:
            return []
        skew = 0.0
        if page.server_now is not None:
            skew = page.server_now.timestamp() - time.time()
        now = time.time() + skew
        include_expired = bool(self.query.get("include_expired"))
        fresh = []
        for s in page.signals:
            if not self.seen.add(s.id):
                continue
            # the board drops expired signals too; this catches one that expired in flight
            if not include_expired and not s.pinned and s.expires_at.timestamp() <= now:
                continue
            fresh.append(s)
        return fresh

    def advance(self, page: SignalPage) -> bool:
        """Moves the cursor past `page`; True when the poll brought nothing (so the next may pause)."""
        before = self.cursor
        self.cursor = page.next_cursor
        return before == page.next_cursor and not page.signals

    def done(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0


def publish_retry_delay(err: WireError, attempt: int, waited: float, retries: int, budget: float) -> float | None:
    """How long to wait before trying a refused publish again, or None to give up: only a 429 or 503
    that says when (`Retry-After`), at most `retries` times and `budget` seconds of waiting in all."""
    if attempt >= retries or err.status not in (429, 503) or err.retry_after is None:
        return None
    delay = retry_delay(err, attempt)
    return delay if waited + delay <= budget else None
