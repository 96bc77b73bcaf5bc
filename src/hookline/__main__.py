"""`python -m hookline`: the same as the `hookline` command."""

from hookline.cli import main

main()
