"""Against a real board from this repository, on the embedded database and on PostgreSQL."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Iterator

import pytest

from wire_board import AsyncWire, RateLimited, RetryInfo, Signal, Wire

from .board import Board, until

PUBLISHERS, EACH = 4, 25


def tag() -> str:
    return f"t{secrets.token_hex(4)}"


class Collect:
    """A follower on a thread of its own, collecting what it is handed."""

    def __init__(self, follower: Iterator[Signal], stop: threading.Event) -> None:
        self.got: list[Signal] = []
        self.error: BaseException | None = None
        self.stop = stop
        self.thread = threading.Thread(target=self._run, args=(follower,), daemon=True)
        self.thread.start()

    def _run(self, follower: Iterator[Signal]) -> None:
        try:
            for s in follower:
                self.got.append(s)
        except BaseException as e:
            self.error = e

    def ids(self) -> list[str]:
        if self.error:
            raise self.error
        return [s.id for s in self.got]

    def end(self) -> None:
        self.stop.set()
        self.thread.join(timeout=40)
        assert not self.thread.is_alive()


def test_every_acknowledged_signal_is_seen_once_in_order_under_concurrent_publishers(board: Board) -> None:
    t = tag()
    wire = Wire(board.url)
    head = wire.read(tag=t).next_cursor
    stop = threading.Event()
    seen = Collect(iter(wire.follow(tag=t, cursor=head, stop=stop, wait=2)), stop)
    acked: list[tuple[int, str]] = []
    lock = threading.Lock()

    def publish(n: int) -> None:
        with Wire(board.url, token=f"publisher-{n}-{t}") as w:
            for i in range(EACH):
                r = w.publish("broadcast", tags=[t], n=n, i=i)
                assert r.cursor is not None
                with lock:
                    acked.append((r.cursor, r.signal.id))

    threads = [threading.Thread(target=publish, args=(n,)) for n in range(PUBLISHERS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    want = [sid for _, sid in sorted(acked)]
    until(lambda: len(seen.ids()) >= len(want), 30, f"{len(want)} signals")
    seen.end()
    assert len(want) == PUBLISHERS * EACH
    assert seen.ids() == want, "each acknowledged signal once, in feed order, none skipped"


async def test_the_async_follower_keeps_the_same_promise(board: Board) -> None:
    t = tag()
    async with AsyncWire(board.url) as wire:
        head = (await wire.read(tag=t)).next_cursor

        async def publisher(n: int) -> list[tuple[int, str]]:
            async with AsyncWire(board.url, token=f"async-publisher-{n}-{t}") as w:
                out = []
                for i in range(EACH):
                    r = await w.publish("broadcast", tags=[t], i=i)
                    assert r.cursor is not None
                    out.append((r.cursor, r.signal.id))
                return out

        async def follow(n: int) -> list[str]:
            got = []
            async for s in wire.follow(tag=t, cursor=head):
                got.append(s.id)
                if len(got) == n:
                    return got
            return got

        follower = asyncio.ensure_future(follow(PUBLISHERS * EACH))
        acked = [x for xs in await asyncio.gather(*(publisher(n) for n in range(PUBLISHERS))) for x in xs]
        got = await asyncio.wait_for(follower, 30)
    assert got == [sid for _, sid in sorted(acked)]


def test_a_request_gets_its_replies_and_no_others(board: Board) -> None:
    t = tag()
    with Wire(board.url, token=f"asker-{t}") as asker, Wire(board.url, token=f"helper-{t}") as helper:
        other = asker.publish("request", tags=[t], text="another question")
        ask = asker.request("request", tags=[t], timeout=10, wait=2, text="who can help?")
        # both land before the waiter's first poll: the publish's cursor is what keeps the first
        mine = helper.publish("reply", ref=ask.signal.id, text="I can")
        helper.publish("reply", ref=other.signal.id, text="not to you")
        helper.publish("broadcast", tags=[t], text="noise")
        got = []
        for r in ask:
            got.append(r)
            if len(got) == 1:
                helper.publish("reply", ref=ask.signal.id, text="me too")
            if len(got) == 2:
                break
    assert got[0].id == mine.signal.id
    assert [r.text for r in got] == ["I can", "me too"]
    assert all(r.ref_id == ask.signal.id for r in got)


async def test_an_async_request_ends_at_its_timeout(board: Board) -> None:
    async with AsyncWire(board.url, token=f"async-asker-{tag()}") as wire:
        ask = await wire.request("request", text="anyone?", timeout=4, wait=1)
        async with AsyncWire(board.url, token="async-helper-token") as helper:
            reply = await helper.publish("reply", ref=ask.signal.id, text="yes")
        got = [r.id async for r in ask]
    assert got == [reply.signal.id]


def test_a_publish_retried_with_its_key_returns_the_same_signal(board: Board) -> None:
    t = tag()
    with Wire(board.url, token=f"idem-{t}") as wire:
        first = wire.publish("broadcast", tags=[t], idempotency_key=f"k-{t}", text="once")
        again = wire.publish("broadcast", tags=[t], idempotency_key=f"k-{t}", text="once")
        assert again.signal.id == first.signal.id and again.cursor == first.cursor
        assert [s.id for s in wire.read(tag=t).signals] == [first.signal.id]


def test_follow_carries_on_across_a_board_restart(board: Board) -> None:
    t = tag()
    wire = Wire(board.url, token=f"restart-{t}")
    a = wire.publish("broadcast", tags=[t], text="before")
    stop = threading.Event()
    retries: list[RetryInfo] = []
    seen = Collect(
        iter(
            wire.follow(
                tag=t,
                cursor=a.cursor - 1 if a.cursor else 0,
                stop=stop,
                wait=2,
                backoff=(0.2, 1.0),
                on_retry=retries.append,
            )
        ),
        stop,
    )
    until(lambda: seen.ids() == [a.signal.id], 10, "the first signal")
    try:
        board.stop()
        until(lambda: retries, 20, "the follower to meet the stopped board")
    finally:
        board.start()
    b = wire.publish("broadcast", tags=[t], text="after")
    until(lambda: len(seen.ids()) == 2, 30, "the signal published after the restart")
    seen.end()
    assert seen.ids() == [a.signal.id, b.signal.id], "nothing repeated, nothing skipped"
    assert all(r.error.status in (0, 503) for r in retries)


def test_a_rate_limited_publish_is_retried_once_the_board_says() -> None:
    limited = Board("postgres", {"PUBLISH_RATE_LIMIT_MAX": "1", "PUBLISH_RATE_LIMIT_WINDOW_MS": "1000"}).start()
    try:
        with Wire(limited.url, token="limited-token") as wire:
            first = wire.publish("broadcast", text="one")
            second = wire.publish("broadcast", text="two")  # refused with 429 and Retry-After, then accepted
            assert second.signal.id != first.signal.id
            assert [s.text for s in wire.read().signals] == ["one", "two"], "published once each"
        with Wire(limited.url, token="limited-token", publish_retries=0) as wire, pytest.raises(RateLimited) as e:  # noqa: PT012
            for text in ("three", "four"):  # one of them is refused
                wire.publish("broadcast", text=text)
        assert e.value.retry_after is not None and e.value.retry_after <= 1
    finally:
        limited.close()


async def test_stop_ends_an_async_follower_in_the_middle_of_a_long_poll(pg_board: Board) -> None:
    import httpx

    stop = asyncio.Event()
    async with AsyncWire(pg_board.url) as wire:

        async def follow() -> list[Signal]:
            return [s async for s in wire.follow(tag=tag(), start="head", stop=stop)]

        task = asyncio.ensure_future(follow())
        async with httpx.AsyncClient() as http:

            async def waiting() -> bool:
                return bool((await http.get(f"{pg_board.url}/readyz")).json().get("waiting"))

            for _ in range(200):  # until the board holds the follower's long-poll (wait=25)
                if await waiting():
                    break
                await asyncio.sleep(0.05)
            assert await waiting()
        stop.set()
        assert await asyncio.wait_for(task, 5) == [], "ended well before the long-poll's 25 s"
