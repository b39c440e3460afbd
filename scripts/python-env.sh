#!/usr/bin/env bash
# The Python client's virtual environment (python/.venv, or $WIRE_PYTHON_VENV): created when missing,
# then `pip install -e "python[test]"` when pyproject.toml is newer than the last install.
# Packages come from the index pip is configured with (pip.conf, PIP_INDEX_URL, ...). PIP_RETRIES
# defaults to 0: on a machine whose configured index lists PyPI as well as a local mirror but cannot
# reach PyPI, pip otherwise retries the unreachable host 5 times for every package (httpx and its 6
# dependencies took 55 s here, 2.4 s with PIP_RETRIES=0), while with PyPI reachable one try is enough.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${WIRE_PYTHON_VENV:-$root/python/.venv}"
python="${WIRE_PYTHON:-python3}"
export PIP_RETRIES="${PIP_RETRIES:-0}" PIP_DISABLE_PIP_VERSION_CHECK=1

if [ ! -x "$venv/bin/python" ]; then
  command -v "$python" >/dev/null || { echo "python-env: $python not found: install Python 3.10 or newer (Debian: apt-get install python3 python3-venv)" >&2; exit 1; }
  echo "python-env: creating $venv with $("$python" --version 2>&1)"
  "$python" -m venv "$venv" || { echo "python-env: '$python -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
stamp="$venv/.wire-installed"
if [ ! -f "$stamp" ] || [ "$root/python/pyproject.toml" -nt "$stamp" ]; then
  echo "python-env: installing wire-board and its test tools into $venv"
  "$venv/bin/pip" install --quiet -e "$root/python[test]"
  touch "$stamp"
fi
