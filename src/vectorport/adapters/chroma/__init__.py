"""The chroma adapter."""
