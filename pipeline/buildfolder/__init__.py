"""The build folder and what is written in it: its layout, lock and resumable manifests (:mod:`.builddir`), the
dataset rows and features (:mod:`.dataset`), the config index (:mod:`.configs`), ``build_report.json``
(:mod:`.build_report`) and the recorded inputs that say whether a folder was built from these (:mod:`.fingerprint`).

May import: ``core`` ... ``catalog``. It stores what the stages made; it runs none of them.
"""
