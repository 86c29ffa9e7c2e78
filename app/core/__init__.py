"""Small pieces every layer shares: item keys, safe spreadsheet cells, atomic file writes,
table readers, control texts, JSON values and number rules.

Each module here imports only the standard library, `meaningbench.errors` and
`meaningbench.db`'s partial-file names, so any layer of the engine may use it (see the
layers in resources/docs/development.md). Nothing is imported here.
"""
