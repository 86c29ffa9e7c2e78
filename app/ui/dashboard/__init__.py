"""The Dashboard: metric-versus-human correlations, live, with sanity checks, agreement,
rater QC and exports."""

from meaningbench.ui.dashboard.page import DashboardPage, open_in_compare

__all__ = ["DashboardPage", "open_in_compare"]
