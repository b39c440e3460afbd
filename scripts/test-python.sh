#!/usr/bin/env bash
# The Python client's suite (python/tests, pytest), run by `npm test` after tap. It needs dist/
# (npm test builds first) and this machine's PostgreSQL, like the tap suites; it prints
# "# pytest { total: N, pass: N, fail: N, skip: N }" (tests/conftest.py), which .ci/run adds to tap's summary.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/python-env.sh" || { echo "# pytest { total: 1, pass: 0, fail: 1, skip: 0 }"; exit 1; }
venv="${WIRE_PYTHON_VENV:-$root/python/.venv}"
cd "$root/python" && exec "$venv/bin/python" -m pytest -p no:cacheprovider "$@"
