"""What an evaluation writes: the numbers from the scores (:mod:`.aggregate`: ``results.json``, ``samples.jsonl``,
the original layout), the results folder as typed records (:mod:`.folder`), lm-eval JSON, Markdown and CSV
(:mod:`.tables`) and the summary rows they share with the report (:mod:`.summary`).

May import: ``evaluation.models``, ``.protocol``, ``.data`` and the pipeline.
"""
