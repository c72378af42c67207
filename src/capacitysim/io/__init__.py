"""File readers and writers: TOML inputs validated on load, atomic writes of outputs."""
