"""Build stages of s2sbench: plain functions and classes, no orchestrator imports.

Each stage reads typed records (see :mod:`s2sbench.pipeline.core.records`) and writes records, so any stage can be
re-run, inspected with ``jq`` or pandas, and orchestrated by Prefect (``s2sbench.flows``) or anything else.
"""
