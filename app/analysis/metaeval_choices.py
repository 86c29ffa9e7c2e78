"""The Which-metric choices the command line offers (groupings with their one name each,
in the tab, the report and the command's output; paired tests), apart from the measures so
that building the command line does not import scipy and pandas."""

from __future__ import annotations

GROUPINGS = ("none", "item", "system", "per-system")
GROUPING_NAMES = {
    "none": "all outputs together",
    "item": "per source, averaged",
    "system": "system level",
    "per-system": "per system, averaged",
}
DEFAULT_GROUPING = "none"
TESTS = (
    "perm-both",
    "boot-both",
    "perm-items",
    "perm-systems",
    "perm-outputs",
    "williams",
    "pairs",
)
