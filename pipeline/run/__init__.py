"""A build run from end to end: :func:`.build.run_build` (items -> speak -> conditions -> assembly), the
``--dry-run`` plan (:mod:`.build_plan`), assembly into the dataset and report (:mod:`.assemble`), re-verifying a
finished build (:mod:`.reverify`) and progress lines with an ETA (:mod:`.progress`).

May import: every pipeline layer below (``core`` ... ``buildfolder``).
"""
