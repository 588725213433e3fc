"""The core: types, filters, capabilities, errors, plugins and the facade users call."""
