"""Study settings whose key more than one layer names, kept free of imports: the window
reads the study's name before SQLAlchemy loads, and a rater's kit keeps it."""

from __future__ import annotations

# The study's display name (the window's title).
NAME_KEY = "name"
