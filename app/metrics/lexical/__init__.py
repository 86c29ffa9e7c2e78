"""Lexical metrics."""
