"""Stopping the emulators and leaving the process never hang, in whatever order it happens.

Each scenario runs in its own Python process, as a user's script or test session would
(start the emulator, call it through the vendor's SDK, then exit), under a generous
time limit that only a hang can reach. Before stop() polled its own event, an emulator
left running at exit (a ``with running()`` entered and never left, as
``benchmarks.servers.SERVERS`` keeps them) hung in ``socketserver.BaseServer.shutdown``
when the garbage collector closed it at interpreter exit, and so did a stop before start.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import vectorport

pytest.importorskip("pinecone")
pytest.importorskip("turbopuffer")

HANG_LIMIT_SECONDS = 60
SOURCE_ROOT = str(Path(vectorport.__file__).resolve().parent.parent)

PINECONE_CALLS = """
from pinecone import Pinecone

def sdk_calls(url):
    pc = Pinecone(api_key="emulator-key", host=url)
    model = pc.indexes.create(
        name="exit", deployment={"deployment_type": "managed", "cloud": "aws",
                                 "region": "us-east-1"},
        schema={"fields": {"_values": {"type": "dense_vector", "dimension": 2,
                                       "metric": "cosine"}}}, timeout=-1)
    index = pc.index(host=model.host)
    index.upsert(vectors=[("a", [1.0, 2.0])], namespace="")
    assert [m.id for m in index.query(vector=[1.0, 2.0], top_k=1, namespace="").matches] == ["a"]
"""

TURBOPUFFER_CALLS = """
import turbopuffer

def sdk_calls(url):
    client = turbopuffer.Turbopuffer(api_key="emulator-key", base_url=url)
    namespace = client.namespace("exit")
    namespace.write(upsert_rows=[{"id": "a", "vector": [1.0, 2.0]}],
                    distance_metric="cosine_distance")
    rows = namespace.query(rank_by=("vector", "ANN", [1.0, 2.0]), top_k=1).rows or []
    assert [row.id for row in rows] == ["a"]
"""

SCENARIOS = {
    # A context entered and never left: the garbage collector closes it at exit.
    "pinecone left running at exit": PINECONE_CALLS + """
from vectorport.testing.emulators.pinecone import running
context = running()
sdk_calls(context.__enter__().url)
""",
    "turbopuffer left running at exit": TURBOPUFFER_CALLS + """
from vectorport.testing.emulators.turbopuffer import running
context = running()
sdk_calls(context.__enter__().url)
""",
    "launcher left running at exit": """
from pathlib import Path
from vectorport.testing import launchers
context = launchers.pinecone(Path("."))
context.__enter__()
""",
    "stop before start, twice": """
from vectorport.testing.emulators.pinecone import PineconeEmulator
from vectorport.testing.emulators.turbopuffer import TurbopufferEmulator
pinecone = PineconeEmulator()
pinecone.server.stop()
pinecone.server.stop()
turbopuffer = TurbopufferEmulator()
turbopuffer.stop()
turbopuffer.stop()
""",
    "stop twice, then leave the context": PINECONE_CALLS + """
from vectorport.testing.emulators.pinecone import emulate
with emulate() as emulator:
    sdk_calls(emulator.server.url)
    emulator.server.stop()
    emulator.server.stop()
""",
    "stop registered with atexit": PINECONE_CALLS + """
import atexit
from vectorport.testing.emulators.pinecone import PineconeEmulator
emulator = PineconeEmulator()
emulator.server.start()
atexit.register(emulator.server.stop)
sdk_calls(emulator.server.url)
""",
    "stop from inside a request": """
import urllib.request
from vectorport.testing.emulators.http import Response
from vectorport.testing.emulators.pinecone import PineconeEmulator
emulator = PineconeEmulator()

@emulator.server.router.route("GET", "/stop")
def stop(request):
    emulator.server.stop()
    return Response(200, {"stopped": True})

emulator.server.start()
request = urllib.request.Request(emulator.server.url + "/stop",
                                 headers={"Api-Key": "emulator-key"})
assert urllib.request.urlopen(request, timeout=30).read() == b'{"stopped":true}'
""",
    "exit with a request in flight": """
import threading, time, urllib.request
from vectorport.testing.emulators.pinecone import running
context = running(stall=True)
server = context.__enter__()

def call():
    try:
        urllib.request.urlopen(server.url + "/indexes", timeout=120)
    except Exception:
        pass

threading.Thread(target=call, daemon=True).start()
time.sleep(0.3)  # the request reaches the stalled handler, which never answers
""",
}


@pytest.mark.parametrize("script", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_the_process_ends(script: str, tmp_path: Path) -> None:
    code = textwrap.dedent(script) + "\nprint('reached the end', flush=True)\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [SOURCE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])])}
    try:
        finished = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                                  cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=HANG_LIMIT_SECONDS)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"the process hung; its output: {hung.stdout!r} {hung.stderr!r}")
    assert finished.stdout.strip().endswith("reached the end"), finished.stderr
    assert finished.returncode == 0, finished.stderr
