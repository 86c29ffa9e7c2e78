"""The Campaign page: rater kits out and back, each rater's progress, the items' ratings."""

from __future__ import annotations

from meaningbench.ui.campaign.page import CampaignPage

__all__ = ["CampaignPage"]
