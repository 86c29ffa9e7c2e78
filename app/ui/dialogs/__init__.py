"""Dialogs of the main window: import, export, battery, kits, merge, study settings, help and
guides, rater mode's send back, and the errors they show."""
