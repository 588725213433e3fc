"""The turbopuffer adapter."""
