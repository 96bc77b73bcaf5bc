"""The helpers behind `hookline.cli`: private, one module per concern.

`cli.py` declares the commands and their options; these modules do the work, each a thin
layer over the public library: `exits` (exit codes and the one-line error report),
`setup` (agents, models and stores from options and the environment), `builtins` (the
default agent's tools), `render` (status lines and events on a terminal), `run`, `chat`,
`serve` and `sessions` (one per command).
"""
