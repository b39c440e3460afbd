"""As users get it: the wheel built, installed into a fresh virtual environment with pip (from the index
this machine is configured with), and an example script run from there against a real board."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

from wire_board import Wire

from .board import Board, until

ROOT = Path(__file__).resolve().parents[1]
PIP_ENV = {**os.environ, "PIP_RETRIES": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # see scripts/python-env.sh


def run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or PIP_ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{cmd} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_the_wheel_installs_in_a_fresh_venv_and_its_example_runs(pg_board: Board, tmp_path: Path) -> None:
    run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp_path / "dist", ROOT, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("wire_board-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "wire_board/py.typed" in names and not any(n.startswith("tests/") for n in names)

    venv = tmp_path / "venv"
    # a venv without its own pip, installed into by this one's (`pip --python`): the same install, ~25 s less
    run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", wheel, cwd=tmp_path)
    where = run(venv / "bin" / "python", "-c", "import wire_board; print(wire_board.__file__)", cwd=tmp_path)
    assert where.startswith(str(venv)), f"imported from {where}, not the fresh venv"

    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(ROOT / "examples" / "echo_agent.py", app)
    env = {**os.environ, "WIRE_URL": pg_board.url, "WIRE_TOKEN": "echo-agent-token"}
    agent = subprocess.Popen(
        [venv / "bin" / "python", "echo_agent.py"],
        cwd=app,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        assert agent.stdout.readline().startswith("answering requests on")
        until(lambda: (app / "echo-agent.cursor").exists(), 30, "the agent's cursor file")
        with Wire(pg_board.url, token="asker-token") as wire:
            ask = wire.request("request", tags=["echo"], text="ping", timeout=20, wait=5)
            reply = next(iter(ask))
        assert reply.text == "echo: ping" and reply.ref_id == ask.signal.id
        assert agent.stdout.readline().startswith(f"answered {ask.signal.id}")
    finally:
        agent.send_signal(signal.SIGTERM)
        code = agent.wait(timeout=40)
    assert code == 0, agent.stderr.read() if agent.stderr else ""

    # the command line from the same environment
    out = run(venv / "bin" / "python", "-m", "wire_board", "publish", "from the wheel", cwd=app, env=env)
    assert '"text": "from the wheel"' in out
