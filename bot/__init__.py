"""comind.bot."""
