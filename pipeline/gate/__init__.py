"""The gate: whether a clip says its text. The ASR engines behind one interface (:mod:`.asr`), the checks and
the verdict of one clip (:mod:`.verify`: normalization, WER/CER/SER, speech rate, silence, loops), and the policy
over a clip's attempts (:mod:`.attempts`: how each retry reads, a failure not worth retrying, keeping a clip on the
reference's likelihood).

May import: ``core``, ``machine``, ``text``, ``items``. It hears audio it is handed; it never makes any.
"""
