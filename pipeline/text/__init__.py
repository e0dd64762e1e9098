"""Text as it is spoken: language codes and their facts (:mod:`.languages`), the reading a voice says and the gate
compares (:mod:`.normalize`: numbers, dates, units, ranges written out), Chinese script helpers (:mod:`.zh_script`:
Latin letters as their Chinese names).

May import: ``core``, ``machine``.
"""
