"""A real Wire board for the integration tests: `node dist/apps/server/main.js` from this repository,
on the embedded database (a temporary WIRE_DATA_DIR) or on this machine's PostgreSQL (a schema of its
own, dropped afterwards). Run `npm run build` first (`npm test` does)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
MAIN = REPO / "dist" / "apps" / "server" / "main.js"
TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL", "postgres://root@127.0.0.1:5432/test")
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379")
LIVE = re.compile(r"is live at (http://\S+)")


def node() -> str:
    """The project's Node (the `node` dev dependency, as `npm start` uses), else WIRE_NODE, else `node`."""
    if os.environ.get("WIRE_NODE"):
        return os.environ["WIRE_NODE"]
    own = REPO / "node_modules" / ".bin" / "node"
    return str(own) if own.exists() else "node"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.05) -> Any:
    """Waits on state: returns the first truthy `check()`, or fails naming `what` after `timeout` seconds."""
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "REDIS_", "WIRE_", "SERVER_"))}
    env.update(LOG_LEVEL="warn", WIRE_CONFIG="/nonexistent/board.json")
    for k in ("IDENTITY_URL", "PUBLIC_WIRE_HOST", "PUBLIC_WIRE_URL"):
        env.pop(k, None)
    return env


class Board:
    """One board process; `start()` again after `stop()` or `kill()` restarts it on the same port and data."""

    def __init__(self, kind: str, env: dict[str, str] | None = None) -> None:
        if not MAIN.exists():
            raise RuntimeError(f"{MAIN} is missing: run `npm run build` first (npm test does)")
        self.kind = kind
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self._tmp = tempfile.TemporaryDirectory(prefix=f"wire-py-{kind}-")
        self.schema = f"py_{os.getpid()}_{secrets.token_hex(3)}"
        self.env = base_env() | {"SERVER_PORT": str(self.port)}
        if kind == "embedded":
            self.env["WIRE_DATA_DIR"] = str(Path(self._tmp.name) / "data")
        else:
            self.env |= {"DATABASE_URL": TEST_DATABASE_URL, "REDIS_URL": TEST_REDIS_URL, "WIRE_PG_SCHEMA": self.schema}
        self.env |= env or {}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = Path(self._tmp.name) / "board.log"

    def start(self, timeout: float = 120.0) -> Board:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [node(), str(MAIN)],
                env=self.env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        offset = self.log.stat().st_size

        def live() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the board exited ({self.proc.returncode}):\n{self.output()}")
            return bool(LIVE.search(self.log.read_text(errors="replace")[offset:]))

        until(live, timeout, f"the {self.kind} board to start", every=0.1)
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def _signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=60)

    def stop(self) -> None:
        """SIGTERM: long-polls answered, publishes committed, then exit."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def close(self) -> None:
        self.kill()
        if self.kind == "postgres":
            drop_schema(self.schema)
        self._tmp.cleanup()


def drop_schema(schema: str) -> None:
    """Drops the board's schema and its sweeper's pg-boss schema (`<schema>_boss`)."""
    sql = f'drop schema if exists "{schema}" cascade; drop schema if exists "{schema}_boss" cascade;'
    subprocess.run(
        ["psql", TEST_DATABASE_URL, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True
    )
