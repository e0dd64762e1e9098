"""The pairwise perplexity protocol: the modes and the requests each asks a model to score (:mod:`.modes`), the
scores, their normalizations and the accuracy rules (:mod:`.scoring`), and the statistics over items (:mod:`.stats`:
bootstrap intervals, McNemar, degradation).

May import: ``evaluation.models`` and the pipeline.
"""
