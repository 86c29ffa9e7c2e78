"""Annotation sessions: queues, submissions, undo, skips and flags — Qt-free."""
