"""Long-running work (import, scoring, training) that the CLI and the UI both run, Qt-free."""
