"""One-shot calls against respx: status codes to exceptions, publish retries and Idempotency-Key, models."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest
import respx

import wire_board as wb
from wire_board import AsyncWire, Draft, Signal, Wire, WireError, parse_retry_after

from .fixtures import error, signal

URL = "http://b.test"
OK = {"ok": True, "signal": signal("s1"), "cursor": 41}


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    delays: list[float] = []
    monkeypatch.setattr(time, "sleep", lambda s: delays.append(s))
    return delays


@pytest.fixture
def board() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=URL, assert_all_called=False) as r:
        yield r


@pytest.mark.parametrize(
    ("status", "body", "cls"),
    [
        (400, error("invalid_request"), wb.InvalidRequest),
        (400, error("reply_requires_ref"), wb.ReplyRequiresRef),
        (401, error("unauthorized"), wb.Unauthorized),
        (402, error("insufficient_standing"), wb.InsufficientStanding),
        (403, error("unverified_limited"), wb.UnverifiedLimited),
        (403, error("forbidden"), wb.Forbidden),
        (404, None, wb.NotFound),
        (405, error("method_not_allowed"), wb.MethodNotAllowed),
        (413, error("payload_too_large"), wb.PayloadTooLarge),
        (429, error("rate_limited"), wb.RateLimited),
        (501, error("admin_disabled"), wb.AdminDisabled),
        (502, "<html>bad gateway</html>", wb.Unavailable),
        (500, error("internal"), wb.InternalError),
    ],
)
def test_errors_are_typed_by_their_code(
    board: respx.MockRouter, status: int, body: object, cls: type[WireError]
) -> None:
    content = json.dumps(body).encode() if isinstance(body, dict) else str(body or "").encode()
    board.get("/sw/signals/x").mock(return_value=httpx.Response(status, content=content))
    with pytest.raises(cls) as e:
        Wire(URL).get("x")
    assert e.value.status == status and e.value.code == cls.code
    assert e.value.retryable == (status in (429, 500, 502))


def test_an_unknown_code_keeps_the_boards_word(board: respx.MockRouter) -> None:
    board.get("/sw/wire").mock(return_value=httpx.Response(409, json=error("conflict_of_tomorrow")))
    with pytest.raises(WireError) as e:
        Wire(URL).board()
    assert type(e.value) is WireError and e.value.code == "conflict_of_tomorrow"


def test_no_answer_is_unavailable_with_status_0(board: respx.MockRouter) -> None:
    board.get("/sw/wire").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(wb.Unavailable) as e:
        Wire(URL).board()
    assert e.value.status == 0 and e.value.retryable


def test_retry_after() -> None:
    assert parse_retry_after("2") == 2 and parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470) == 10
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None and parse_retry_after("9" * 65) is None


def test_publish_sends_the_flat_body_and_a_key_of_its_own(board: respx.MockRouter) -> None:
    route = board.post("/sw/signals").mock(return_value=httpx.Response(200, json=OK))
    res = Wire(URL, token="tok-12345").publish(
        "offer", tags=["gpu"], ttl=60, ref="r1", price=3, payload={"type": "kept"}
    )
    sent = route.calls[0].request
    assert json.loads(sent.content) == {
        "$type": "offer",
        "$tags": ["gpu"],
        "$ttl": 60,
        "$refId": "r1",
        "type": "kept",
        "price": 3,
    }
    assert sent.headers["authorization"] == "Bearer tok-12345"
    assert sent.headers["idempotency-key"].startswith("wire-py-")
    assert res.cursor == 41 and res.signal.id == "s1"
    Wire(URL, publish_retries=0).publish("broadcast")
    assert "idempotency-key" not in route.calls[1].request.headers, "no retries: no key unless asked"
    with pytest.raises(ValueError, match="may not start with"):
        Wire(URL).publish("broadcast", payload={"$ttl": 5})


def test_a_shed_publish_is_retried_with_the_same_key(board: respx.MockRouter, slept: list[float]) -> None:
    route = board.post("/sw/signals").mock(
        side_effect=[
            httpx.Response(503, json=error("unavailable"), headers={"retry-after": "2"}),
            httpx.Response(429, json=error("rate_limited"), headers={"retry-after": "1"}),
            httpx.Response(200, json=OK),
        ]
    )
    assert Wire(URL).publish("broadcast", idempotency_key="mine", text="hi").signal.id == "s1"
    assert [c.request.headers["idempotency-key"] for c in route.calls] == ["mine"] * 3
    assert 2 <= slept[0] <= 2.2 and 1 <= slept[1] <= 1.1


def test_publish_retries_are_bounded(board: respx.MockRouter, slept: list[float]) -> None:
    busy = httpx.Response(503, json=error("unavailable"), headers={"retry-after": "1"})
    route = board.post("/sw/signals").mock(return_value=busy)
    with pytest.raises(wb.Unavailable):
        Wire(URL, publish_retries=2).publish("broadcast")
    assert len(route.calls) == 3 and len(slept) == 2, "two retries, then the error"
    route.mock(return_value=httpx.Response(429, json=error("rate_limited"), headers={"retry-after": "60"}))
    with pytest.raises(wb.RateLimited) as e:
        Wire(URL, publish_retry_budget=30).publish("broadcast")
    assert e.value.retry_after == 60 and len(slept) == 2, "a wait beyond the budget is not waited"
    route.mock(return_value=httpx.Response(503, json=error("unavailable")))
    with pytest.raises(wb.Unavailable):
        Wire(URL).publish("broadcast")
    assert len(slept) == 2, "a 503 that does not say when is not retried"


async def test_the_async_client_retries_the_same_way(board: respx.MockRouter, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    delays: list[float] = []
    real = asyncio.sleep

    async def fake(s: float) -> None:
        delays.append(s)
        await real(0)

    monkeypatch.setattr("wire_board.aio.asyncio.sleep", fake)
    route = board.post("/sw/signals").mock(
        side_effect=[
            httpx.Response(503, json=error("unavailable"), headers={"retry-after": "3"}),
            httpx.Response(200, json=OK),
        ]
    )
    async with AsyncWire(URL) as w:
        assert (await w.publish("broadcast", text="hi")).cursor == 41
    keys = {c.request.headers["idempotency-key"] for c in route.calls}
    assert len(route.calls) == 2 and len(keys) == 1 and 3 <= delays[0] <= 3.3


def test_signal_keeps_every_field_and_unknown_ones() -> None:
    raw = signal("s1", text="hi") | {"future": 1}
    s = Signal.model_validate(raw)
    assert (s.origin_verified, s.boost_bits, s.text, s.created_at.tzinfo is not None) == (True, 0, "hi", True)
    assert s.model_dump(by_alias=True, mode="json") == raw, "the board's JSON, byte for byte in meaning"


def test_draft_aliases_the_envelope() -> None:
    d = Draft.model_validate({"$type": "reply", "$refId": "r", "text": "t"})
    assert (d.type, d.ref_id, d.model_extra) == ("reply", "r", {"text": "t"})
    assert Draft(type="x", tags=["a"]).body() == {"$type": "x", "$tags": ["a"]}


def test_an_answer_is_bounded_by_its_decoded_bytes(board: respx.MockRouter) -> None:
    import gzip

    stats = {"activeSignals": 1, "activeIdentities": 1, "recentPollers": 0}
    meta = {"uri": "sw://b.test", "authority": "b.test", "name": "main", "description": None, "stats": stats}
    packed = gzip.compress(json.dumps(meta).encode())
    board.get("/sw/wire").mock(return_value=httpx.Response(200, content=packed, headers={"content-encoding": "gzip"}))
    assert Wire(URL).board().name == "main", "a compressed answer is read decoded"
    bomb = gzip.compress(b" " * 5_000_000 + json.dumps(meta).encode())  # ~5 KB on the wire, 5 MB decoded
    assert len(bomb) < 10_000
    board.get("/sw/wire").mock(return_value=httpx.Response(200, content=bomb, headers={"content-encoding": "gzip"}))
    with pytest.raises(wb.InternalError, match="larger than 1000000 bytes"):
        Wire(URL, max_answer_bytes=1_000_000).board()
    assert Wire(URL).board().name == "main", "within the default bound"


async def test_the_async_client_bounds_answers_too(board: respx.MockRouter) -> None:
    board.get("/sw/signals/x").mock(return_value=httpx.Response(404, content=b"x" * 5000))
    async with AsyncWire(URL, max_answer_bytes=4096) as w:
        with pytest.raises(wb.InternalError, match="larger than 4096"):
            await w.get("x")
