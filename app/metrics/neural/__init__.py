"""Neural metrics."""
