"""`AsyncWire`: the asyncio client (httpx.AsyncClient), with the same methods as `Wire`."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any

import httpx
from typing_extensions import Unpack

from . import _http as h
from ._core import WAIT_MARGIN, FollowState, publish_retry_delay, read_cursor_file, read_params, write_cursor_file
from ._options import FollowKwargs, FollowOptions, RetryInfo, follow_options
from .errors import WireError
from .models import BoardActivity, BoardMetadata, Published, Signal, SignalPage, SignalThread, SignalWithReplies


class AsyncWire:
    """A Wire board, in asyncio code: the same calls, options and promises as `Wire`, awaited; `follow` and
    `request` return async iterators (`async for`). `client` is an `httpx.AsyncClient` of yours."""

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        token: str | None = None,
        read_url: str | Sequence[str] | None = None,
        client: httpx.AsyncClient | None = None,
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
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._own:
            await self._client.aclose()

    async def __aenter__(self) -> AsyncWire:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _send(self, call: h.Call) -> httpx.Response:
        req = self._client.build_request(
            call.method,
            call.url,
            params=tuple(call.params),
            json=call.json,
            headers=h.headers(self.token, call.headers),
            timeout=call.timeout or httpx.Timeout(self.timeout),
        )
        try:
            res = await self._client.send(req, stream=True)
            try:
                body = bytearray()
                async for chunk in res.aiter_bytes():  # decoded bytes, counted as they come
                    body += chunk
                    if len(body) > self.max_answer_bytes:
                        raise h.too_large(call, self.max_answer_bytes, res.status_code)
            finally:
                await res.aclose()
        except httpx.HTTPError as e:  # no answer: refused, reset, timed out
            raise h.transport_error(call, e) from e
        return h.buffered(res, bytes(body))

    async def publish(
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
        """As `Wire.publish`."""
        body = h.draft_body(type, tags=tags, ttl=ttl, ref=ref, payload={**(payload or {}), **fields})
        key = idempotency_key or (h.new_idempotency_key() if self.publish_retries > 0 else None)
        call = h.Call("POST", self.urls[0] + "/sw/signals", json=body, headers={"idempotency-key": key} if key else {})
        attempt, waited = 0, 0.0
        while True:
            try:
                return h.parse(await self._send(call), Published)
            except WireError as e:
                delay = publish_retry_delay(e, attempt, waited, self.publish_retries, self.publish_retry_budget)
                if delay is None:
                    raise
                await asyncio.sleep(delay)
                attempt, waited = attempt + 1, waited + delay

    async def read(
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
        """As `Wire.read`."""
        params = read_params(
            cursor=cursor, wait=wait, limit=limit, type=type, tag=tag, q=q, origin=origin,
            since=since, ref=ref, include_expired=include_expired,
        )  # fmt: skip
        timeout = httpx.Timeout(self.timeout, read=max(self.timeout, (wait or 0) + WAIT_MARGIN))
        res = await self._send(h.Call("GET", self.read_urls[0] + "/sw/signals", params, timeout=timeout))
        return h.parse(res, SignalPage)

    async def get(self, id: str) -> SignalWithReplies:
        return h.parse(
            await self._send(h.Call("GET", f"{self.read_urls[0]}/sw/signals/{h.seg(id)}")), SignalWithReplies
        )

    async def thread(self, id: str) -> SignalThread:
        res = await self._send(h.Call("GET", f"{self.read_urls[0]}/sw/signals/{h.seg(id)}/thread"))
        return h.parse(res, SignalThread)

    async def board(self) -> BoardMetadata:
        return h.parse(await self._send(h.Call("GET", self.read_urls[0] + "/sw/wire")), BoardMetadata)

    async def stats(self, *, bucket_seconds: int | None = None, buckets: int | None = None) -> BoardActivity:
        p = [(k, str(v)) for k, v in (("bucketSeconds", bucket_seconds), ("buckets", buckets)) if v is not None]
        return h.parse(await self._send(h.Call("GET", self.read_urls[0] + "/sw/stats", p)), BoardActivity)

    async def discover(self) -> dict[str, Any]:
        return dict(h.parse_json(await self._send(h.Call("GET", self.read_urls[0] + "/.well-known/wire"))))

    def follow(self, **options: Unpack[FollowKwargs]) -> AsyncFollower:
        """As `Wire.follow`; iterate with `async for`. `on_cursor` may be a coroutine function; `stop` an
        `asyncio.Event` (setting it also ends a long-poll in flight), and cancelling the task works too."""
        return AsyncFollower(self, follow_options(**options))

    async def request(
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
        stop: asyncio.Event | None = None,
        **fields: Any,
    ) -> AsyncReplies:
        """As `Wire.request`; iterate the replies with `async for`."""
        published = await self.publish(
            type, tags=tags, ttl=ttl, idempotency_key=idempotency_key, payload=payload, **fields
        )
        opts = follow_options(ref=published.signal.id, cursor=published.cursor, wait=wait, on_retry=on_retry, stop=stop)
        return AsyncReplies(AsyncFollower(self, opts, deadline=time.monotonic() + timeout), published)


class AsyncFollower:
    """As `Follower`, for `async for`."""

    def __init__(self, wire: AsyncWire, o: FollowOptions, deadline: float | None = None) -> None:
        self._wire = wire
        self._o = o
        cursor = o.cursor if o.cursor is not None else (read_cursor_file(o.cursor_file) if o.cursor_file else None)
        self._state = FollowState(o.query, cursor, o.start, o.wait, o.dedupe_window, o.backoff, deadline)
        self.url = wire.read_urls[0]
        self._started = False

    @property
    def cursor(self) -> int | None:
        return self._state.cursor

    def _stopped(self) -> bool:
        return (self._o.stop is not None and self._o.stop.is_set()) or self._state.done()

    async def _until_stop(self, aw: Any, seconds: float | None = None) -> tuple[bool, Any]:
        """Awaits `aw` (or sleeps `seconds`), ended early by `stop`: (False, None) when stopped."""
        stop: asyncio.Event | None = self._o.stop
        aw = aw if aw is not None else asyncio.sleep(max(0.0, seconds or 0.0))
        if stop is None:
            return True, await aw
        job = asyncio.ensure_future(aw)
        stopper = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({job, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            if not job.done():
                job.cancel()
        return (True, job.result()) if job.done() and not job.cancelled() else (False, None)

    def __aiter__(self) -> AsyncIterator[Signal]:
        if self._started:
            raise RuntimeError("an AsyncFollower is iterated once; call follow() again")
        self._started = True
        return self._run()

    async def _run(self) -> AsyncIterator[Signal]:
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
                ok, res = await self._until_stop(self._wire._send(call))
                if not ok:
                    return
                page = h.parse(res, SignalPage)
            except WireError as e:
                delay = st.failed(e)  # raises what retrying cannot help
                if e.status != 429:
                    reader += 1
                if o.on_retry:
                    o.on_retry(RetryInfo(e, delay, self.url))
                if not (await self._until_stop(None, delay))[0]:
                    return
                continue
            for s in st.page(page):
                yield s
            idle = st.advance(page)
            if o.cursor_file:
                await asyncio.to_thread(write_cursor_file, o.cursor_file, page.next_cursor)
            if o.on_cursor:
                r = o.on_cursor(page.next_cursor)
                if inspect.isawaitable(r):
                    await r
            elapsed = time.monotonic() - started
            if idle and elapsed < o.min_interval and not (await self._until_stop(None, o.min_interval - elapsed))[0]:
                return


class AsyncReplies:
    """As `Replies`, for `async for`."""

    def __init__(self, follower: AsyncFollower, published: Published) -> None:
        self._follower = follower
        self.published = published
        self.signal = published.signal
        self.cursor = published.cursor

    async def __aiter__(self) -> AsyncIterator[Signal]:
        async for s in self._follower:
            if s.ref_id == self.signal.id:
                yield s
