"""Built-in adapters. Each registers through the ``vectorport`` entry-point group."""
