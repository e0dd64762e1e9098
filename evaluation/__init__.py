"""Evaluation: the pairwise perplexity protocol, statistics and model adapters."""
