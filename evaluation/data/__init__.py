"""Where an evaluation's data comes from (:mod:`.sources`: a build folder, a Hub dataset, a saved folder) and which
rows it scores (:mod:`.selection`: tasks, voices, limit).

May import: ``evaluation.models``, ``evaluation.protocol`` and the pipeline.
"""
