"""The stores the sub-agent tests run on (`tests/support/backends.py`)."""

from support.backends import backend, shared, store

__all__ = ["backend", "shared", "store"]
