from __future__ import annotations

from collections.abc import Iterator

import pytest

from .board import Board


@pytest.fixture(scope="session")
def embedded_board() -> Iterator[Board]:
    """One embedded board for the session: its first start (the database's initialisation) is the slow one."""
    b = Board("embedded").start()
    yield b
    b.close()


@pytest.fixture(scope="session")
def pg_board() -> Iterator[Board]:
    b = Board("postgres").start()
    yield b
    b.close()


@pytest.fixture(params=["embedded", "postgres"])
def board(request: pytest.FixtureRequest) -> Board:
    """The same test on both databases."""
    name = "embedded_board" if request.param == "embedded" else "pg_board"
    b: Board = request.getfixturevalue(name)
    return b


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line in tap's summary format, which .ci/run adds to tap's own:
    `# pytest { total: N, pass: N, fail: N, skip: N }`."""
    stats = terminalreporter.stats
    passed = len([r for r in stats.get("passed", []) if r.when == "call"])
    failed = len({r.nodeid for k in ("failed", "error") for r in stats.get(k, [])})
    skipped = len(stats.get("skipped", []))
    total = passed + failed + skipped
    terminalreporter.write_line(f"# pytest {{ total: {total}, pass: {passed}, fail: {failed}, skip: {skipped} }}")
