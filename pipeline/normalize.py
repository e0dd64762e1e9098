"""Text normalization before TTS: numbers, dates, times, currency, abbreviations and symbols become words.

A TTS engine reads "$5" or "2024年" its own way (often wrongly, sometimes not at all); writing them out makes the
speech say what the text says, and the written-out text is what the clip records as ``normalized_text``. The rules
are ordered: specific patterns (dates, currency, percentages) run before bare numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["normalize_for_tts", "chinese_number", "chinese_digits"]

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

_FULLWIDTH = str.maketrans("０１２３４５６７８９％＄￥", "0123456789%$¥")
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"


def normalize_for_tts(text: str, language: str) -> str:
    """The text as it should be spoken in ``language`` (``en``, ``zh``; other languages: numbers only)."""
    text = text.translate(_FULLWIDTH)
    family = language.lower().split("-")[0].split("_")[0]
    if family == "en":
        text = _apply(text, _ENGLISH_RULES)
    elif family == "zh":
        text = _apply(text, _CHINESE_RULES)
    else:
        text = _other_language_numbers(text, family)
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

_CN_DIGITS = "零一二三四五六七八九"
_CN_UNITS = ["", "十", "百", "千"]
_CN_SECTIONS = ["", "万", "亿", "万亿"]
# A lone 2 before these measure words is read 两 (两个人), not 二.
_MEASURE_WORDS = set("个只本件位次天条张块斤把辆双台头匹间岁倍碗杯瓶家种句")
_CURRENCY_ZH = {"$": "美元", "¥": "元", "€": "欧元", "£": "英镑"}
_UNITS_ZH = {"km/h": "公里每小时", "°C": "摄氏度", "℃": "摄氏度", "°F": "华氏度", "km": "公里", "kg": "公斤",
             "cm": "厘米", "mm": "毫米", "m": "米", "g": "克"}
_SYMBOLS_ZH = {"+": "加", "=": "等于", "&": "和", "@": "艾特", "×": "乘", "~": "到", "#": "号"}


def chinese_digits(digits: str) -> str:
    """Digit by digit (years, phone numbers): ``2024`` -> ``二零二四``."""
    return "".join(_CN_DIGITS[int(d)] for d in digits if d.isdigit())


def _four_digits(value: int) -> str:
    out, zero_pending = "", False
    for position in range(3, -1, -1):
        digit = value // 10**position % 10
        if digit == 0:
            zero_pending = bool(out)
            continue
        if zero_pending:
            out += "零"
            zero_pending = False
        out += _CN_DIGITS[digit] + _CN_UNITS[position]
    return out


def chinese_number(number: str | int) -> str:
    """Read a number the Chinese way: ``1005`` -> ``一千零五``, ``12`` -> ``十二``, ``3.14`` -> ``三点一四``."""
    text = str(number).replace(",", "")
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("+-").partition(".")
    value = int(whole or "0")
    if value == 0:
        spoken = "零"
    else:
        sections, spoken = [], ""
        while value:
            sections.append(value % 10000)
            value //= 10000
        for index in range(len(sections) - 1, -1, -1):
            section = sections[index]
            if section == 0:
                continue
            if spoken and (section < 1000):
                spoken += "零"  # a gap inside a section boundary: 10,005 -> 一万零五
            spoken += _four_digits(section) + _CN_SECTIONS[index]
        spoken = spoken.lstrip("零")
        if spoken.startswith("一十"):
            spoken = spoken[1:]  # 十二, not 一十二
    if fraction:
        spoken += "点" + chinese_digits(fraction)
    return ("负" if negative else "") + spoken


def _date_zh(m: re.Match[str]) -> str:
    spoken = chinese_digits(m["y"]) + "年"
    if m["m"]:
        spoken += chinese_number(m["m"]) + "月"
    if m["d"]:
        spoken += chinese_number(m["d"]) + (m["day"] or "日")
    return spoken


def _time_zh(m: re.Match[str]) -> str:
    minute = int(m["min"])
    hour = "两" if int(m["h"]) == 2 else chinese_number(m["h"])
    if minute == 0:
        return f"{hour}点"
    return f"{hour}点{'零' if minute < 10 else ''}{chinese_number(minute)}分"


def _bare_number_zh(m: re.Match[str]) -> str:
    number, following = m["num"], m["next"] or ""
    plain = number.replace(",", "")
    mobile = len(plain) == 11 and plain.startswith("1") and "," not in number
    if "." not in plain and (mobile or (plain.startswith("0") and len(plain) > 1)):
        return chinese_digits(plain) + following  # phone numbers, room numbers, codes: digit by digit
    if plain == "2" and following and following[0] in _MEASURE_WORDS:
        return "两" + following
    return chinese_number(number) + following


_CHINESE_RULES: list[Rule] = [
    (re.compile(r"(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?P<day>)"), _date_zh),
    (re.compile(r"(?P<y>\d{2,4})年(?:(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})(?P<day>[日号]))?)?"), _date_zh),
    (re.compile(r"(?P<m>\d{1,2})月(?P<d>\d{1,2})(?P<day>[日号])"),
     lambda m: f"{chinese_number(m['m'])}月{chinese_number(m['d'])}{m['day']}"),
    (re.compile(r"(?P<h>\d{1,2}):(?P<min>\d{2})"), _time_zh),
    (re.compile(rf"(?P<cur>[$¥€£])\s?(?P<amount>{_NUMBER})"),
     lambda m: chinese_number(m["amount"]) + _CURRENCY_ZH[m["cur"]]),
    (re.compile(rf"(?P<num>{_NUMBER})\s?%"), lambda m: "百分之" + chinese_number(m["num"])),
    (re.compile(rf"(?P<num>{_NUMBER}) ?(?P<unit>km/h|°C|℃|°F|km|kg|cm|mm|m|g)(?![A-Za-z])"),
     lambda m: chinese_number(m["num"]) + _UNITS_ZH[m["unit"]]),
    (re.compile(r"(?P<a>\d)\s?[-~]\s?(?P<b>\d)"), lambda m: f"{m['a']}到{m['b']}"),
    (re.compile(rf"(?:(?<!\w)(?P<sign>-))?(?P<num>{_NUMBER})(?P<next>.)?", re.DOTALL),
     lambda m: ("负" if m["sign"] else "") + _bare_number_zh(m)),
    (re.compile("[" + re.escape("".join(_SYMBOLS_ZH)) + "]"), lambda m: _SYMBOLS_ZH[m[0]]),
]
