"""What the neural metrics run on, and no metric itself: loading and caching models and
embeddings, encoding and batching texts, windows over long texts, idf and baselines, the
base class of the cloze metrics and the LLM judge's transports and templates.

A module of `meaningbench.metrics.neural` is one metric an entry point names; everything
it shares with another metric, or keeps apart to stay short, lives here.
"""
