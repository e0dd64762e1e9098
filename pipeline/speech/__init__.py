"""Speech: the TTS engines behind one interface (:mod:`.tts`), post-processing and the content-addressed clip store
(:mod:`.audio`), making one clip (:mod:`.synthesize`), the speak stage that makes and gates every clip of an item in
one voice (:mod:`.speak`), and the acoustic conditions derived from the kept clips (:mod:`.conditions`).

May import: ``core``, ``machine``, ``text``, ``items``, ``gate``.
"""
