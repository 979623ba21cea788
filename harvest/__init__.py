"""comind.harvest."""
