"""The pinecone adapter."""
