"""Tests of the `hookline` command line."""
