"""The pinecone adapter: Pinecone through the official ``pinecone`` SDK."""
