"""`Wire`: the synchronous client (httpx.Client)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx
from typing_extensions import Unpack

from . import _http as h
from ._core import (
    WAIT_MARGIN,
    FollowState,
    Start,
    publish_retry_delay,
    read_cursor_file,
    read_params,
    write_cursor_file,
)
from ._options import FollowKwargs, FollowOptions, RetryInfo, follow_options
from .errors import WireError
from .models import BoardActivity, BoardMetadata, Published, Signal, SignalPage, SignalThread, SignalWithReplies


class Wire:
    """A Wire board, synchronously: one-shot calls, `follow` and `request`.

    `url` is the board's base URL (or several: a follower moves to the next when one fails); `read_url`
    where reads and follows go when not `url`; `token` the bearer token (needed to publish); `client` an
    `httpx.Client` of yours (not closed by `close()`); `timeout` the deadline in seconds of every call but
    long-polls, whose read timeout is their `wait` plus 15 s. A publish refused with 429 or 503 and
    `Retry-After` is tried again up to `publish_retries` times within `publish_retry_budget` seconds, with
    an `Idempotency-Key` (yours, or one made for the call), so it is never published twice. An answer
    larger than `max_answer_bytes` (decoded; 64 MiB) is refused as it streams in.
    """

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        token: str | None = None,
        read_url: str | Sequence[str] | None = None,
        client: httpx.Client | None = None,
        timeout: float = 30.0,
        publish_retries: int = 3,
        publish_retry_budget: float = 30.0,
        max_answer_bytes: int = h.MAX_ANSWER_BYTES,
    ) -> None:
        self.urls = h.base_urls(url)
        self.read_urls = h.base_urls(read_url if read_url is not None else url)
        self.token = token
        self.timeout = timeout
        self.publish_retries = publish_retries
        self.publish_retry_budget = publish_retry_budget
        self.max_answer_bytes = max_answer_bytes
        self._own = client is None
        self._client = client if client is not None else httpx.Client(timeout=timeout)

    def close(self) -> None:
        if self._own:
            self._client.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _send(self, call: h.Call) -> httpx.Response:
        req = self._client.build_request(
            call.method,
            call.url,
            params=tuple(call.params),
            json=call.json,
            headers=h.headers(self.token, call.headers),
            timeout=call.timeout or httpx.Timeout(self.timeout),
        )
        try:
            res = self._client.send(req, stream=True)
            try:
                body = bytearray()
                for chunk in res.iter_bytes():  # decoded bytes, counted as they come
                    body += chunk
                    if len(body) > self.max_answer_bytes:
                        raise h.too_large(call, self.max_answer_bytes, res.status_code)
            finally:
                res.close()
        except httpx.HTTPError as e:  # no answer: refused, reset, timed out
            raise h.transport_error(call, e) from e
        return h.buffered(res, bytes(body))

    def publish(
        self,
        type: str,
        /,
        *,
        tags: Iterable[str] | None = None,
        ttl: int | None = None,
        ref: str | None = None,
        idempotency_key: str | None = None,
        payload: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> Published:
        """Publishes a signal of `type` whose payload is `payload` and the keyword `fields` (e.g. `text="hi"`);
        `ref` is the signal this replies to. Returns the signal and its feed position (`.cursor`)."""
        body = h.draft_body(type, tags=tags, ttl=ttl, ref=ref, payload={**(payload or {}), **fields})
        key = idempotency_key or (h.new_idempotency_key() if self.publish_retries > 0 else None)
        call = h.Call("POST", self.urls[0] + "/sw/signals", json=body, headers={"idempotency-key": key} if key else {})
        attempt, waited = 0, 0.0
        while True:
            try:
                return h.parse(self._send(call), Published)
            except WireError as e:
                delay = publish_retry_delay(e, attempt, waited, self.publish_retries, self.publish_retry_budget)
                if delay is None:
                    raise
                time.sleep(delay)
                attempt, waited = attempt + 1, waited + delay

    def read(
        self,
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
    ) -> SignalPage:
        """One page of the feed (no retries; `follow` keeps up with a board)."""
        params = read_params(
            cursor=cursor, wait=wait, limit=limit, type=type, tag=tag, q=q, origin=origin,
            since=since, ref=ref, include_expired=include_expired,
        )  # fmt: skip
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, (wait or 0) + WAIT_MARGIN))
        return h.parse(
            self._send(h.Call("GET", self.read_urls[0] + "/sw/signals", params, timeout=timeout)), SignalPage
        )

    def get(self, id: str) -> SignalWithReplies:
        """One signal (raw id or `sw://` URI) and its direct replies."""
        return h.parse(self._send(h.Call("GET", f"{self.read_urls[0]}/sw/signals/{h.seg(id)}")), SignalWithReplies)

    def thread(self, id: str) -> SignalThread:
        """The root and every descendant, oldest first."""
        return h.parse(self._send(h.Call("GET", f"{self.read_urls[0]}/sw/signals/{h.seg(id)}/thread")), SignalThread)

    def board(self) -> BoardMetadata:
        """Board metadata and live counts (`GET /sw/wire`)."""
        return h.parse(self._send(h.Call("GET", self.read_urls[0] + "/sw/wire")), BoardMetadata)

    def stats(self, *, bucket_seconds: int | None = None, buckets: int | None = None) -> BoardActivity:
        """Activity in time buckets (`GET /sw/stats`)."""
        p = [(k, str(v)) for k, v in (("bucketSeconds", bucket_seconds), ("buckets", buckets)) if v is not None]
        return h.parse(self._send(h.Call("GET", self.read_urls[0] + "/sw/stats", p)), BoardActivity)

    def discover(self) -> dict[str, Any]:
        """The discovery document (`/.well-known/wire`)."""
        return dict(h.parse_json(self._send(h.Call("GET", self.read_urls[0] + "/.well-known/wire"))))

    def follow(self, **options: Unpack[FollowKwargs]) -> Follower:
        """Follows the feed: every matching signal once, oldest first, live. See `FollowOptions` for the
        filters and options (`follow_options`); iterate the result with `for`, `follower.cursor` is where to resume."""
        return Follower(self, follow_options(**options))

    def request(
        self,
        type: str,
        /,
        *,
        timeout: float,
        tags: Iterable[str] | None = None,
        ttl: int | None = None,
        idempotency_key: str | None = None,
        payload: Mapping[str, Any] | None = None,
        wait: float = 25.0,
        on_retry: Callable[[RetryInfo], None] | None = None,
        stop: threading.Event | None = None,
        **fields: Any,
    ) -> Replies:
        """Publishes a signal, then follows its direct replies from the publish's own feed position (so none
        slips in between) until `timeout` seconds pass. Iterate the result for the replies."""
        published = self.publish(type, tags=tags, ttl=ttl, idempotency_key=idempotency_key, payload=payload, **fields)
        opts = follow_options(ref=published.signal.id, cursor=published.cursor, wait=wait, on_retry=on_retry, stop=stop)
        return Replies(Follower(self, opts, deadline=time.monotonic() + timeout), published)


class Follower:
    """A live follower of one feed query. Iterate it once; `cursor` is the position to resume from
    after the signals handed out so far, and `url` the reader the next poll goes to."""

    def __init__(self, wire: Wire, o: FollowOptions, deadline: float | None = None) -> None:
        self._wire = wire
        self._o = o
        cursor = o.cursor if o.cursor is not None else (read_cursor_file(o.cursor_file) if o.cursor_file else None)
        self._state = FollowState(o.query, cursor, o.start, o.wait, o.dedupe_window, o.backoff, deadline)
        self.url = wire.read_urls[0]
        self._started = False

    @property
    def cursor(self) -> int | None:
        return self._state.cursor

    def _sleep(self, seconds: float) -> bool:
        """Waits; False when `stop` was set meanwhile."""
        if self._o.stop is not None:
            return not self._o.stop.wait(max(0.0, seconds))
        time.sleep(max(0.0, seconds))
        return True

    def _stopped(self) -> bool:
        return (self._o.stop is not None and self._o.stop.is_set()) or self._state.done()

    def __iter__(self) -> Iterator[Signal]:
        if self._started:
            raise RuntimeError("a Follower is iterated once; call follow() again")
        self._started = True
        st, o, urls = self._state, self._o, self._wire.read_urls
        reader = 0
        while not self._stopped():
            self.url = urls[reader % len(urls)]
            params, read_timeout = st.params()
            started = time.monotonic()
            call = h.Call(
                "GET", self.url + "/sw/signals", params, timeout=httpx.Timeout(self._wire.timeout, read=read_timeout)
            )
            try:
                page = h.parse(self._wire._send(call), SignalPage)
            except WireError as e:
                delay = st.failed(e)  # raises what retrying cannot help
                if e.status != 429:
                    reader += 1  # another reader may answer; a rate limit is the same everywhere
                if o.on_retry:
                    o.on_retry(RetryInfo(e, delay, self.url))
                if not self._sleep(delay):
                    return
                continue
            yield from st.page(page)
            idle = st.advance(page)
            if o.cursor_file:
                write_cursor_file(o.cursor_file, page.next_cursor)
            if o.on_cursor:
                o.on_cursor(page.next_cursor)
            elapsed = time.monotonic() - started
            if idle and elapsed < o.min_interval and not self._sleep(o.min_interval - elapsed):
                return


class Replies:
    """The direct replies to a published signal, as they arrive, until the timeout. `signal` is the
    published signal, `cursor` its feed position."""

    def __init__(self, follower: Follower, published: Published) -> None:
        self._follower = follower
        self.published = published
        self.signal = published.signal
        self.cursor = published.cursor

    def __iter__(self) -> Iterator[Signal]:
        for s in self._follower:
            if s.ref_id == self.signal.id:  # a board without the ref filter sends everything
                yield s


__all__ = ["Follower", "Replies", "Start", "Wire"]
