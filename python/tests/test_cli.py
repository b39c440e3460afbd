"""`python -m wire_board` as a script runs it: a real child process against a real board."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from wire_board import Wire, read_cursor_file

from .board import Board, until
from .test_board import tag


class Follow:
    """`python -m wire_board follow …` writing NDJSON to a file."""

    def __init__(self, url: str, *args: str) -> None:
        self.out = Path(tempfile.mkstemp(prefix="wire-follow-", suffix=".ndjson")[1])
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "wire_board", "--url", url, "follow", *args],
                stdout=out,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )

    def lines(self) -> list[dict[str, object]]:
        return [json.loads(x) for x in self.out.read_text().splitlines()]

    def ids(self) -> list[object]:
        return [x["id"] for x in self.lines()]

    def end(self, sig: int) -> tuple[int, str]:
        os.killpg(self.proc.pid, sig)
        self.proc.wait(timeout=30)
        err = self.proc.stderr.read().decode() if self.proc.stderr else ""
        self.out.unlink()
        return self.proc.returncode, err


def test_follow_resumes_from_its_cursor_file_after_a_sigkill(board: Board, tmp_path: Path) -> None:
    t, cursor_file = tag(), tmp_path / "cursor"
    wire = Wire(board.url, token=f"cli-{t}")
    # the first run starts at the head: nothing before it
    wire.publish("broadcast", tags=[t], text="before the follower")
    first = Follow(board.url, "--tag", t, "--from", "head", "--cursor-file", str(cursor_file))
    until(lambda: cursor_file.exists(), 30, "the head in the cursor file")
    batch1 = [wire.publish("broadcast", tags=[t], i=i) for i in range(5)]
    until(lambda: read_cursor_file(cursor_file) == batch1[-1].cursor, 30, "the cursor after the first batch")
    assert first.ids() == [p.signal.id for p in batch1]
    assert first.end(signal.SIGKILL)[0] == -signal.SIGKILL
    batch2 = [wire.publish("broadcast", tags=[t], i=i) for i in range(5, 12)]  # while no follower runs
    second = Follow(board.url, "--tag", t, "--cursor-file", str(cursor_file))
    until(lambda: len(second.ids()) >= len(batch2), 30, "the second run to catch up")
    assert second.ids() == [p.signal.id for p in batch2], "exactly what the first run had not finished"
    # the page's lines come first, then its cursor
    until(lambda: read_cursor_file(cursor_file) == batch2[-1].cursor, 30, "the cursor after the second batch")
    code, _ = second.end(signal.SIGTERM)
    assert code == 0, "SIGTERM ends a follow cleanly"


def test_publish_from_the_command_line(pg_board: Board) -> None:
    t = tag()
    env = {**os.environ, "WIRE_URL": pg_board.url, "WIRE_TOKEN": f"cli-publisher-{t}"}

    def run(*a: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "wire_board", "publish", *a]
        return subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=60)

    one = run("hi there", "--tag", t, "-f", "n=3", "-f", "who=me", "--idempotency-key", f"k-{t}")
    assert one.returncode == 0, one.stderr
    sent = json.loads(one.stdout)["signal"]
    assert (sent["payload"], sent["tags"]) == (
        {"$type": "broadcast", "$tags": [t], "text": "hi there", "n": 3, "who": "me"},
        [t],
    )
    again = run("hi there", "--tag", t, "-f", "n=3", "-f", "who=me", "--idempotency-key", f"k-{t}")
    assert json.loads(again.stdout)["signal"]["id"] == sent["id"], "the same key, the same signal"
    piped = run("-", stdin=json.dumps({"$type": "reply", "$refId": sent["id"], "text": "re"}))
    assert json.loads(piped.stdout)["signal"]["refId"] == sent["id"]
    bad = run("x", "--ttl", "5")
    assert bad.returncode == 1 and bad.stderr.startswith("wire: invalid_request (400): ")
