"""HTTP emulators of hosted vector databases' public APIs, driven by their official SDKs.

Each emulator module offers ``running(...)``, a context manager yielding the running
:class:`~vectorport.testing.emulators.http.EmulatorServer` (its ``url`` and switchable
``faults``), and ``serve(host, port, faults)`` for the ``vectorport emulator NAME`` command.
"""

EMULATORS: dict[str, str] = {
    "pinecone": "vectorport.testing.emulators.pinecone",
    "turbopuffer": "vectorport.testing.emulators.turbopuffer",
}
