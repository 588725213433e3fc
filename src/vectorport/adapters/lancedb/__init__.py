"""The LanceDB adapter (embedded, and LanceDB Cloud/Enterprise with a key)."""
