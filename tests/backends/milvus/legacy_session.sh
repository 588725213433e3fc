#!/usr/bin/env bash
# The milvus tests on the Milvus C++ engine line: milvus-lite 2.5 with pymilvus 2.6.
# See tests/backends/milvus/legacy.md. Usage (from anywhere):
#   tests/backends/milvus/legacy_session.sh [pytest args...]
# The venv (MILVUS_LEGACY_VENV, default /tmp/mvlegacy) is created on first use and
# reused afterwards. The pins are installed first, then vectorport without its
# dependencies, so that pip never pulls pymilvus 3 / milvus-lite 3 in.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
VENV="${MILVUS_LEGACY_VENV:-/tmp/mvlegacy}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet "pymilvus>=2.6,<2.7" "milvus-lite>=2.5,<2.6"
"$VENV/bin/pip" install --quiet numpy pluggy pytest hypothesis pytest-asyncio
"$VENV/bin/pip" install --quiet --no-deps -e "$ROOT"

# Refuse to run on the wrong line: every result would be mislabelled.
"$VENV/bin/python" - <<'PY'
import importlib.metadata as m
lite, client = m.version("milvus-lite"), m.version("pymilvus")
print(f"milvus-lite {lite}, pymilvus {client}")
assert lite.startswith("2.5."), lite
assert client.startswith("2.6."), client
PY

cd "$ROOT"
# test_milvus_escaping.py needs milvus-lite 3's own parser and skips itself here.
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    tests/backends/milvus/test_conformance.py tests/backends/milvus/test_adapter.py \
    tests/backends/milvus/test_ranking.py tests/backends/milvus/test_escaping.py \
    tests/backends/milvus/test_hits.py "$@"
