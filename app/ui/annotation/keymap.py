"""The rating screen's keys, in one table for the help overlay, the README and the tests.

Arrows move the slider that has focus (a horizontal slider answers ← and → as any slider
does); moving between rated items takes Alt (or Ctrl) with ← / →, as back and forward do
in a browser, so a rater adjusting a value never leaves the item by accident.
"""

from __future__ import annotations

KEYMAP: tuple[tuple[str, str], ...] = (
    ("Enter", "Submit and show the next item (once every scale is set)"),
    ("0–9", "Type a value: 7 → 70, 7 5 → 75, 1 0 0 → 100, 0 → 0; Likert: 1–5"),
    ("← → ↑ ↓", "Move the slider by 1 (Likert: one step)"),
    ("Page Up / Page Down", "Move the slider by 10"),
    ("Home / End", "Lowest / highest value"),
    ("Tab / Shift+Tab", "Next / previous scale"),
    ("Alt+← / Alt+→", "Previous / next rated item, to revise it (Ctrl works too)"),
    ("Ctrl+Z", "Undo the last submission and show that item again"),
    ("S", "Skip: the item comes back later (not a rating)"),
    ("F", "Flag the item, with an optional comment"),
    ("G", "Show or hide the guidelines"),
    ("L", "Side by side or stacked"),
    ("Shift+Page Up / Page Down", "Scroll the texts a page up / down (long texts)"),
    ("T", "Scroll the two texts together or each on its own"),
    ("Tab (error spans)", "From the texts to the score and back"),
    ("← → in a text", "Error spans: move the word cursor"),
    ("Shift+← / Shift+→ in a text", "Error spans: stretch the selection over words"),
    ("1 / 2 in a text", "Error spans: mark a minor / major error; on a span, its severity"),
    ("Del in a text", "Error spans: remove the span under the cursor"),
    ("A in a text", "Pre-marked spans: keep the proposal under the cursor"),
    ("N in a text", "Pre-marked spans: go to the next proposal not yet decided"),
    ("? or F1", "Show or hide this list"),
    ("Esc", "Close this list or the guidelines"),
)
