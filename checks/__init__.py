"""comind.checks."""
