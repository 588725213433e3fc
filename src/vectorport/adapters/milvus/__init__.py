"""The milvus adapter."""
