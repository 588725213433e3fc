"""The Qdrant adapter: qdrant-client (server, local mode) and qdrant-edge-py (Qdrant's engine, embedded)."""
