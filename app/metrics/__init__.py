"""The metric battery. Families live in subpackages; `registry` finds them by name."""
