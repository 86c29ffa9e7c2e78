"""The Browser page: the study's items with their ratings and scores, filtered and sorted,
and one item's detail."""
