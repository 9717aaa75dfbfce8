"""NetBox as a source of truth: mapping unit tests and end-to-end imports."""
