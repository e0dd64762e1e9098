"""The machine a build runs on: its cores (:mod:`.cpu`: how many an engine may use), its device (:mod:`.device`:
``--device auto|cpu|cuda``) and what a stage costs on it (:mod:`.costs`: CPU and wall seconds per clip, the ledger
a ``--dry-run`` plan reads).

May import: ``core``.
"""
