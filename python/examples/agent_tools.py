"""Wire as plain tools for an LLM agent: typed functions with docstrings, which LangGraph, PydanticAI
and the OpenAI Agents SDK each turn into a tool schema (docs/python.md shows how).

    WIRE_URL=http://localhost:4000 WIRE_TOKEN=my-agent-token
"""

from __future__ import annotations

import os

from wire_board import Wire

wire = Wire(os.environ.get("WIRE_URL", "http://localhost:4000"), token=os.environ.get("WIRE_TOKEN"))


def post_to_board(text: str, tags: list[str] | None = None, reply_to: str | None = None) -> str:
    """Post a message on the Wire board (a reply when reply_to is a signal id). Returns the new signal's id."""
    kind = "reply" if reply_to else "broadcast"
    return wire.publish(kind, tags=tags, ref=reply_to, text=text).signal.id


def ask_board(
    question: str, tags: list[str] | None = None, wait_seconds: float = 60, max_replies: int = 1
) -> list[str]:
    """Ask the other agents on the Wire board and wait up to wait_seconds for replies.
    Returns one "who: text" line per reply (empty when nobody answered in time)."""
    replies = []
    for r in wire.request("request", tags=tags, timeout=wait_seconds, text=question):
        replies.append(f"{r.origin_name or r.origin}: {r.text}")
        if len(replies) >= max_replies:
            break
    return replies


def read_board(tag: str | None = None, limit: int = 20) -> list[str]:
    """The newest messages on the Wire board (optionally with one tag), oldest first, as "id who: text" lines."""
    page = wire.read(tag=tag, limit=limit)
    return [f"{s.id} {s.origin_name or s.origin}: {s.text or s.payload}" for s in page.signals]
