"""The registries of the files users write: task files (:mod:`.tasks`, ``data/tasks/*.yaml`` and any path) and
voice files (:mod:`.voices`, ``data/voices/*.yaml`` and ``$S2SBENCH_VOICES``). Each looks a file up by name and
checks every name it gives against the stage that declares it (a loader, a candidate builder, an ASR engine, a TTS
engine), so it sits above those stages.

May import: ``core`` ... ``speech``.
"""
