#!/usr/bin/env bash
# Builds the peers' virtual environment, apart from hookline's own .venv.
# Usage: bench/peers/setup.sh [VENV]   (default: $PEERS_VENV, else ~/.cache/hookline-peers)
# $PEERS_PINS: the prefix of another pair of pin files (bench/served/peers-: the peers' servers).
# Python: $PEERS_PYTHON, else python3 (the figures in BENCHMARKS.md: CPython 3.11).
# Prints the venv's python. Does nothing when the venv holds these very pins already; rebuilds
# a venv this script built from other pins; never touches a folder it did not build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pins=${PEERS_PINS:-$here/}
venv=${1:-${PEERS_VENV:-$HOME/.cache/hookline-peers}}
stamp="$venv/.hookline-peers-$(cat "${pins}requirements.txt" "${pins}constraints.txt" | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  if [ -e "$venv" ] && ! compgen -G "$venv/.hookline-peers-*" >/dev/null; then
    echo "$venv exists and was not built by bench/peers/setup.sh: remove it, or pass another folder" >&2
    exit 2
  fi
  rm -rf "$venv"
  "${PEERS_PYTHON:-python3}" -m venv "$venv"
  touch "$venv/.hookline-peers-building"  # ours, should this build be interrupted
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q -r "${pins}requirements.txt" -c "${pins}constraints.txt" >&2
  rm "$venv/.hookline-peers-building"
  touch "$stamp"
fi
echo "$venv/bin/python"
