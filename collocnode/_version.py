"""The library's version, written into every model file."""

__version__ = "0.2.0"
