"""comind: git-native memory for teams and their coding agents."""

__version__ = "0.1.0"
