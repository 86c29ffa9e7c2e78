"""Subcommands of `meaningbench`, one module each (see meaningbench.cli)."""
