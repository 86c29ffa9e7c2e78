"""Dialogs of the main window: import, export, battery, study settings, help, errors."""
