"""What the report says about the machine: CPU, memory, kernel, interpreters, the disk, the commit."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _proc_field(path: str, name: str) -> str:
    with open(path) as lines:
        for line in lines:
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    return ""


def python_version(python: str) -> str:
    """"CPython 3.11.7" for the interpreter `python`."""
    done = subprocess.run(
        [python, "-c", "import platform; print(platform.python_implementation(), platform.python_version())"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() or "?"


def filesystem(path: str) -> str:
    """The file system `path` is on: "ext4 (/dev/vda on /)"."""
    best, found = "", "?"
    with open("/proc/mounts") as mounts:
        for line in mounts:
            device, point, kind = line.split()[:3]
            if os.path.realpath(path).startswith(point) and len(point) > len(best):
                best, found = point, f"{kind} ({device} on {point})"
    return found


def commit() -> str:
    """hookline's commit, and whether src/ has changes not committed yet."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "src"], cwd=ROOT,
                               capture_output=True, text=True)
    except OSError:
        return ""
    return head.stdout.strip() + (" + uncommitted changes in src/" if dirty.stdout.strip() else "")


def machine_info(python: str, peers_python: str | None, tmp: str) -> dict[str, str]:
    """The facts about this machine that BENCHMARKS.md reports."""
    info = {
        "cpu": _proc_field("/proc/cpuinfo", "model name") or "unknown",
        "cores": str(os.cpu_count()),
        "memory": f"{int(_proc_field('/proc/meminfo', 'MemTotal').split()[0]) / 2**20:.1f} GiB",
        "kernel": platform.release(),
        "python": python_version(python),
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "tmp_fs": filesystem(tmp),
        "commit": commit(),
    }
    if peers_python:
        info["peers_python"] = python_version(peers_python)
    return info
