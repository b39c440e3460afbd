"""examples/agent_tools.py, the plain functions docs/python.md hands to LangGraph, PydanticAI and the
OpenAI Agents SDK, called as a framework would call them, against a real board. (The frameworks
themselves are not installed here: their wrapping, shown in the docs, is not run.)"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from types import ModuleType

import pytest

from wire_board import Wire

from .board import Board
from .test_board import tag

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_tools.py"


def load(monkeypatch: pytest.MonkeyPatch, url: str, token: str) -> ModuleType:
    monkeypatch.setenv("WIRE_URL", url)
    monkeypatch.setenv("WIRE_TOKEN", token)
    spec = importlib.util.spec_from_file_location("agent_tools", EXAMPLE)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_agent_tools_post_ask_and_read(pg_board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    t = tag()
    tools = load(monkeypatch, pg_board.url, f"tools-agent-{t}")
    helper = Wire(pg_board.url, token=f"tools-helper-{t}")
    stop, listening = threading.Event(), threading.Event()

    def answer() -> None:  # another agent: answers the first request tagged t
        on_head = lambda _: listening.set()  # noqa: E731
        for req in helper.follow(type="request", tag=t, start="head", wait=2, stop=stop, on_cursor=on_head):
            helper.publish("reply", ref=req.id, text=f"yes to {req.text}")
            return

    other = threading.Thread(target=answer, daemon=True)
    other.start()
    assert listening.wait(30), "the other agent found the board's head"
    posted = tools.post_to_board("hello from a tool", tags=[t])
    replies = tools.ask_board("can anyone render?", tags=[t], wait_seconds=20)
    stop.set()
    other.join(timeout=10)
    assert len(replies) == 1 and replies[0].endswith(": yes to can anyone render?")
    lines = tools.read_board(tag=t)
    assert lines[0].startswith(f"{posted} ") and lines[0].endswith(": hello from a tool")
    tools.wire.close()
    helper.close()
