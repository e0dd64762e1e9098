"""Language facts in one place: how a language code is read, and which languages are written without spaces.

Task files, voices, items and ASR models name languages by ISO 639 codes, optionally with a region or script
(``en``, ``en-US``, ``zh_CN``, ``zh-Hans``, ``yue``). Everything that needs the language itself reads the code through
:func:`base_language`; everything that needs to know whether words are space-separated asks :func:`is_unspaced`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from s2sbench.pipeline.core.errors import ConfigError

# Written without spaces between words: sentences join without a space, the ASR gate scores by characters (CER),
# the cascade's transcript is joined without spaces.
UNSPACED_LANGUAGES = frozenset({"zh", "ja", "yue", "th", "lo", "my", "km", "bo"})
# Written in Chinese characters that an ASR may give in traditional form: compared after conversion to simplified.
CHINESE_SCRIPT_LANGUAGES = frozenset({"zh", "yue"})

_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*")


def base_language(code: str) -> str:
    """The language of a code, lower case, without region or script: ``zh-CN`` -> ``zh``, ``en_US`` -> ``en``."""
    return re.split(r"[-_]", str(code).strip(), maxsplit=1)[0].lower()


def is_unspaced(code: str) -> bool:
    """Whether the language of ``code`` is written without spaces between words (zh, ja, th, ...)."""
    return base_language(code) in UNSPACED_LANGUAGES


def sentence_separator(code: str) -> str:
    """What goes between two sentences of the language: nothing for unspaced languages, else a space."""
    return "" if is_unspaced(code) else " "


def error_metric(code: str) -> str:
    """The ASR error rate a language is scored by: ``ker`` for Japanese, ``cer`` for other unspaced languages, else
    ``wer``."""
    return gate_metric("wer", code)


def gate_metric(requested: str, language: str) -> str:
    """The metric a gate scores ``language`` by: Japanese by KER (the morae of its kana reading: the judge's kanji or
    kana spelling of a word is not an error); other languages written without spaces by CER (WER would count a whole
    sentence as one word), or SER where it is asked for Mandarin; others by what the task asks."""
    code = base_language(language)
    if requested == "ser" and code != "zh":
        raise ValueError(f"metric ser counts Mandarin pinyin syllables; language {language} has none (use cer or wer)")
    if requested == "ker" and code != "ja":
        raise ValueError(f"metric ker counts the morae of a Japanese kana reading; language {language} has none "
                         f"(use cer or wer)")
    if code == "ja":
        return "ker"
    if is_unspaced(code) and requested != "ser":
        return "cer"
    return requested


def _not_a_code(code: object) -> str | None:
    if isinstance(code, str) and _CODE.fullmatch(code):
        return None
    return f"{code!r} is not a language code (ISO 639, e.g. en, zh, es, zh-CN)"


def check_language_code(code: object, what: str = "language") -> str:
    """``code`` if it reads as a language code (``en``, ``zh-CN``, ``yue``), else :class:`ConfigError`."""
    problem = _not_a_code(code)
    if problem:
        raise ConfigError(f"{what}: {problem}")
    return code


def _language_field(code: str) -> str:
    problem = _not_a_code(code)
    if problem:
        raise ValueError(problem)  # pydantic names the key
    return code


#: the type of a config key holding a language code (a task's or a voice's ``language``)
LanguageCode = Annotated[str, AfterValidator(_language_field)]
