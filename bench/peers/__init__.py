"""The adapters of the add-loop benchmark for the floor and the peer frameworks (see bench/harness.py).

Each runs in the peers' venv (`setup.sh`), except the floor: it needs only the standard library
and runs with hookline's interpreter. Each module is imported as `peers.<name>`, never run as a
script: its name would then shadow the framework it measures.
"""
