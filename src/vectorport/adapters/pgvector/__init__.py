"""The pgvector adapter."""
