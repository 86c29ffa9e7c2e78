"""Structural metrics."""
