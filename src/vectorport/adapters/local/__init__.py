"""The reference adapter: exact search in process, in memory or durable in SQLite."""
