"""Subcommands of `meaningbench`, one module each (see app.cli)."""
