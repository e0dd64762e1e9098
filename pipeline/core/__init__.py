"""What every stage stands on: the typed records a row is made of (:mod:`.records`), manifests and atomic writes
(:mod:`.manifest`), strict config sections (:mod:`.schema`), look-up by name (:mod:`.registry`) and the error kinds
with their exit codes (:mod:`.errors`).

May import: nothing else of s2sbench (the bottom layer; the import contract in tests/importlinter.toml says so).
"""
