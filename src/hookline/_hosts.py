"""`is_loopback`: whether an address to listen on is this machine's alone.

The servers without authentication (`hookline serve` and `hookline mcp --http` without
tokens) listen on loopback only; both ask this one function.
"""

from __future__ import annotations

import ipaddress

__all__ = ["is_loopback"]


def is_loopback(host: str) -> bool:
    """Tell whether `host` is `localhost` or a loopback address (127.0.0.0/8, ::1, `[::1]`)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
