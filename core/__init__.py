"""comind: git-native memory for teams and their coding agents."""

__all__ = ["__version__"]

try:  # written by setuptools-scm at build or install time, from the git tags
    from comind._version import __version__
except ImportError:  # a source tree never built or installed
    __version__ = "0.0.0+unknown"
