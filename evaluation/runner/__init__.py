"""Running an evaluation: the checks before a model loads (:mod:`.plan`), one model on a dataset (:mod:`.run`) and
checkpoint sweeps (:mod:`.sweep`).

May import: ``evaluation.models``, ``.protocol``, ``.data``, ``.results`` and the pipeline.
"""
