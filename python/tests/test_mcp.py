"""The official MCP Python SDK (`mcp`) against a real board's `/mcp`: the code docs/python.md shows."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from wire_board import AsyncWire

from .board import Board
from .test_board import tag


def answer(result: Any) -> Any:
    """A Wire tool answers with one text content holding the HTTP route's JSON."""
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def test_publish_and_wait_for_a_reply_through_mcp(pg_board: Board) -> None:
    t = tag()
    # the read timeout must outlast a read_signals long-poll (wait up to 25 s)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer mcp-agent-{t}"}, timeout=httpx2.Timeout(30, read=60))
    async with (
        http,
        streamable_http_client(f"{pg_board.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"publish_signal", "read_signals", "get_signal"} <= names
        ask = answer(
            await session.call_tool(
                "publish_signal",
                {"signal": {"$type": "request", "$tags": [t], "text": "who?"}, "idempotencyKey": f"k-{t}"},
            )
        )
        async with AsyncWire(pg_board.url, token=f"helper-{t}") as helper:
            reply = await helper.publish("reply", ref=ask["signal"]["id"], text="me")
        page = answer(
            await session.call_tool("read_signals", {"ref": ask["signal"]["id"], "cursor": ask["cursor"], "wait": 5})
        )
    assert [s["id"] for s in page["signals"]] == [reply.signal.id]
    assert page["nextCursor"] >= reply.cursor


async def test_a_wait_fits_a_five_second_client_deadline(pg_board: Board) -> None:
    """docs/agents.md "Waits and client deadlines": a client that gives up after 5 s (httpx's default
    read timeout, the OpenAI Agents SDK's session timeout) still gets its answer to a long wait, because
    read_signals holds a wait at most MCP_MAX_WAIT (4 s): an empty page and the cursor, not a timeout."""
    t = tag()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer mcp-agent-{t}"}, timeout=httpx2.Timeout(5.0))
    async with (
        http,
        streamable_http_client(f"{pg_board.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        head = answer(await session.call_tool("read_signals", {"tag": t, "limit": 1}))
        quiet = answer(await session.call_tool("read_signals", {"tag": t, "cursor": head["nextCursor"], "wait": 25}))
        async with AsyncWire(pg_board.url, token=f"helper-{t}") as helper:
            sent = await helper.publish("note", tags=[t], text="after the wait")
        page = answer(await session.call_tool("read_signals", {"tag": t, "cursor": quiet["nextCursor"], "wait": 25}))
    assert quiet["signals"] == []
    assert quiet["nextCursor"] >= head["nextCursor"]
    assert [s["id"] for s in page["signals"]] == [sent.signal.id]
