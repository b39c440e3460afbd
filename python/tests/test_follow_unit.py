"""The follower against a board played by respx: which request follows which answer, and what it
waits in between (time.sleep is the clock here: it records the delays and returns at once)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from wire_board import (
    InvalidRequest,
    RetryInfo,
    Wire,
    backoff_delay,
    read_cursor_file,
    retry_delay,
)
from wire_board._core import SeenIds
from wire_board.errors import RateLimited, Unavailable

from .fixtures import NOW, error, page, signal

URL = "http://b.test"


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    delays: list[float] = []
    monkeypatch.setattr(time, "sleep", lambda s: delays.append(s))
    return delays


@pytest.fixture
def board() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=URL, assert_all_called=False) as r:
        yield r


def cursors(route: respx.Route) -> list[str | None]:
    return [c.request.url.params.get("cursor") for c in route.calls]


def take(it: Iterator[Any], n: int) -> list[Any]:
    return [next(it) for _ in range(n)]


def test_503_with_retry_after_waits_as_told_and_keeps_the_cursor(board: respx.MockRouter, slept: list[float]) -> None:
    feed = board.get("/sw/signals").mock(
        side_effect=[
            httpx.Response(200, json=page(5, signal("a"))),
            httpx.Response(503, json=error("unavailable"), headers={"retry-after": "7"}),
            httpx.Response(200, json=page(6, signal("b"))),
        ]
    )
    retries: list[RetryInfo] = []
    f = Wire(URL).follow(on_retry=retries.append)
    assert [s.id for s in take(iter(f), 2)] == ["a", "b"]
    assert cursors(feed) == [None, "5", "5"], "the poll after the 503 asks from the same cursor"
    assert isinstance(retries[0].error, Unavailable) and retries[0].error.retry_after == 7
    assert 7 <= slept[0] <= 7.7, f"waited {slept[0]} s: Retry-After plus at most 10 % jitter"


def test_network_errors_back_off_from_1_to_30_s_keeping_the_cursor(board: respx.MockRouter, slept: list[float]) -> None:
    feed = board.get("/sw/signals").mock(
        side_effect=[httpx.Response(200, json=page(9))]
        + [httpx.ConnectError("refused")] * 7
        + [httpx.Response(500, json=error("internal"))]
        + [httpx.Response(200, json=page(10, signal("x")))]
    )
    f = Wire(URL).follow()
    assert next(iter(f)).id == "x"
    assert cursors(feed)[1:] == ["9"] * 9, "every retry asks from the cursor it had"
    steps = [2, 4, 8, 16, 30, 30, 30, 30]
    assert len(slept) == 8
    for d, step in zip(slept, steps, strict=True):
        assert max(1, step / 2) <= d <= step, f"{d} s for a step of {step} s"
    assert f.cursor == 9, "the page in hand is not done yet: resuming would hand out x again"


def test_429_retries_the_same_reader_and_503_the_next(slept: list[float]) -> None:
    with respx.mock(assert_all_called=False) as r:
        one = r.get("http://one.test/sw/signals").mock(
            side_effect=[
                httpx.Response(200, json=page(1)),
                httpx.Response(429, json=error("rate_limited"), headers={"retry-after": "2"}),
                httpx.Response(503, json=error("unavailable"), headers={"retry-after": "1"}),
            ]
        )
        two = r.get("http://two.test/sw/signals").mock(return_value=httpx.Response(200, json=page(2, signal("s"))))
        f = Wire(["http://one.test", "http://two.test"]).follow()
        assert next(iter(f)).id == "s"
        assert len(one.calls) == 3 and cursors(two) == ["1"]
        assert 2 <= slept[0] <= 2.2 and 1 <= slept[1] <= 1.1


def test_a_bad_request_ends_the_loop(board: respx.MockRouter, slept: list[float]) -> None:
    board.get("/sw/signals").mock(return_value=httpx.Response(400, json=error("invalid_request", "bad since")))
    with pytest.raises(InvalidRequest, match="bad since"):
        next(iter(Wire(URL).follow(since="yesterday")))
    assert slept == []


def test_repeats_are_dropped_within_the_window_and_the_window_is_bounded(board: respx.MockRouter) -> None:
    board.get("/sw/signals").mock(
        side_effect=[
            httpx.Response(200, json=page(2, signal("a"), signal("b"))),
            httpx.Response(200, json=page(4, signal("b"), signal("c"))),  # a reader repeating one
            httpx.Response(200, json=page(5, signal("a"))),  # "a" left a window of 2 ids
        ]
    )
    f = Wire(URL).follow(dedupe_window=2)
    assert [s.id for s in take(iter(f), 4)] == ["a", "b", "c", "a"]
    seen = SeenIds(3)
    assert [seen.add(x) for x in "abcab"] == [True, True, True, False, False]
    assert seen.add("d") and len(seen) == 3 and seen.add("a"), "the oldest is forgotten first"


def test_signals_past_expires_at_are_skipped_by_the_boards_clock(board: respx.MockRouter) -> None:
    from datetime import timedelta

    later = NOW + timedelta(hours=2)  # the board's clock is two hours ahead of ours
    board.get("/sw/signals").mock(
        side_effect=[
            httpx.Response(
                200,
                json=page(
                    3, signal("old"), signal("pin", pinned=True), signal("new", expires_in=3 * 3600), server_now=later
                ),
            ),
            httpx.Response(200, json=page(4, signal("last"), server_now=NOW)),
        ]
    )
    assert [s.id for s in take(iter(Wire(URL).follow()), 3)] == ["pin", "new", "last"]


def test_include_expired_keeps_them(board: respx.MockRouter) -> None:
    board.get("/sw/signals").mock(return_value=httpx.Response(200, json=page(3, signal("old", expires_in=-5))))
    f = Wire(URL).follow(include_expired=True)
    assert next(iter(f)).id == "old"
    assert board.calls[0].request.url.params["includeExpired"] == "1"


def test_the_cursor_is_kept_after_each_page_once_its_signals_are_handed_out(
    board: respx.MockRouter, tmp_path: Path
) -> None:
    board.get("/sw/signals").mock(
        side_effect=[
            httpx.Response(200, json=page(2, signal("a"), signal("b"))),
            httpx.Response(200, json=page(3, signal("c"))),
        ]
    )
    file = tmp_path / "cursor"
    events: list[str] = []
    f = Wire(URL).follow(cursor_file=file, on_cursor=lambda c: events.append(f"cursor {c}"))
    for s in f:
        events.append(f"{s.id} (file {read_cursor_file(file)})")
        if s.id == "c":
            break
    assert events == ["a (file None)", "b (file None)", "cursor 2", "c (file 2)"]
    again = board.get("/sw/signals").mock(return_value=httpx.Response(200, json=page(3, signal("d"))))
    assert next(iter(Wire(URL).follow(cursor_file=file))).id == "d"
    assert cursors(again)[-1] == "2", "a new follower resumes from the file"


def test_long_polls_get_a_read_timeout_past_their_wait(board: respx.MockRouter) -> None:
    feed = board.get("/sw/signals").mock(
        side_effect=[httpx.Response(200, json=page(1)), httpx.Response(200, json=page(2, signal("a")))]
    )
    next(iter(Wire(URL, timeout=5).follow(wait=25)))
    timeouts = [c.request.extensions["timeout"] for c in feed.calls]
    assert feed.calls[1].request.url.params["wait"] == "25"
    assert timeouts[1]["read"] == 40 and timeouts[1]["connect"] == 5
    board.get("/sw/signals").mock(return_value=httpx.Response(200, json=page(2)))
    Wire(URL, timeout=5).read(cursor=1, wait=20)
    assert board.calls[-1].request.extensions["timeout"]["read"] == 35


def test_from_head_skips_the_newest_page(board: respx.MockRouter) -> None:
    feed = board.get("/sw/signals").mock(
        side_effect=[httpx.Response(200, json=page(7, signal("old"))), httpx.Response(200, json=page(8, signal("new")))]
    )
    heads: list[int] = []
    assert next(iter(Wire(URL).follow(start="head", on_cursor=heads.append))).id == "new"
    assert feed.calls[0].request.url.params["limit"] == "1" and heads == [7]


def test_an_idle_board_that_answers_at_once_is_polled_at_most_once_a_second(
    board: respx.MockRouter, slept: list[float]
) -> None:
    board.get("/sw/signals").mock(
        side_effect=[
            httpx.Response(200, json=page(1)),
            httpx.Response(200, json=page(1)),
            httpx.Response(200, json=page(2, signal("a"))),
        ]
    )
    next(iter(Wire(URL).follow()))
    assert len(slept) == 1 and 0.9 < slept[0] <= 1.0


def test_delays() -> None:
    assert backoff_delay(0, random=lambda: 0) == 1 and backoff_delay(0, random=lambda: 1) == 2
    assert backoff_delay(50, random=lambda: 0) == 15 and backoff_delay(50, random=lambda: 1) == 30
    told = RateLimited("slow", status=429, retry_after=3600)
    assert retry_delay(told, 0, random=lambda: 0) == 900, "Retry-After is capped at 15 minutes"
    assert retry_delay(Unavailable("x", status=503, retry_after=0), 0, random=lambda: 0) == 0.1
    assert 1 <= retry_delay(Unavailable("x", status=502, retry_after=5), 0) <= 2, "only 429 and 503 are told"


def test_read_params() -> None:
    from wire_board._core import read_params

    assert read_params(wait=19.99999) == [("wait", "20")]
    assert read_params(wait=0.0001) == [("wait", "0")]
    assert read_params(wait=1.5, tag=["a", "b"], include_expired=True) == [
        ("wait", "1.5"),
        ("tag", "a"),
        ("tag", "b"),
        ("includeExpired", "1"),
    ]
    assert read_params(tag="a", since=NOW) == [
        ("tag", "a"),
        ("since", NOW.isoformat(timespec="milliseconds").replace("+00:00", "Z")),
    ]
