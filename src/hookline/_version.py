"""The package's version, in a module of its own so that any module may read it without importing `hookline`."""

__version__ = "0.1.0"
