"""Scoring beyond one machine: portable Parquet shards of the items a study still needs scores
for, executors that score them (here, or on a Ray cluster), and the merge that brings the
results back into the study exactly once.

`pyarrow` and `ray` are the optional extra `meaningbench[cluster]`; they are imported inside
the functions that need them, so the rest of the program runs without them.
"""
