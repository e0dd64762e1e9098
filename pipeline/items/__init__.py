"""Items: what a task is and what it asks. The task file's schema (:mod:`.task_config`, with the acoustic
conditions' specs in :mod:`.condition_config` and the prompt templates in :mod:`.templates`), the source loaders
(:mod:`.sources`), the candidate builders (:mod:`.candidates`, with sCMMLU rewriting and translation in
:mod:`.rewrite`) and :func:`.load.load_task_items`, which turns a task into its items and its drops.

May import: ``core``, ``machine``, ``text``. Nothing here knows a voice, an ASR model or a build folder.
"""
