"""The stores the sub-agent tests run on (`tests/backends.py`)."""

from backends import backend, shared, store

__all__ = ["backend", "shared", "store"]
