import pytest

from s2sbench.pipeline.normalize import chinese_number, normalize_for_tts


@pytest.mark.parametrize("text, spoken", [
    ("Dr. Smith paid $1,234.56.", "Doctor Smith paid one thousand two hundred and thirty-four dollars and fifty-six cents."),
    ("It cost $1 or £2.5 million.", "It cost one dollar or two point five million pounds."),
    ("Prices rose 15% in 1999.", "Prices rose fifteen percent in nineteen ninety-nine."),
    ("We met on 2024-03-05.", "We met on March fifth, twenty twenty-four."),
    ("Due 3/14/2025, or March 3rd, 2021.", "Due March fourteenth, twenty twenty-five, or March third, twenty twenty-one."),
    ("Born 5 June 1987.", "Born the fifth of June, nineteen eighty-seven."),
    ("Lunch at 12:30 pm, dinner at 7:05 and 8:00.", "Lunch at twelve thirty p m, dinner at seven oh five and eight o'clock."),
    ("Mr. and Mrs. Lee live on Main St. near St. Louis.", "Mister and Missus Lee live on Main Street near Saint Louis."),
    ("She ran 10 km, the 21st runner, -3 points.", "She ran ten kilometers, the twenty-first runner, minus three points."),
    ("Tom & Jerry ate 1/2 of it at 30°C.", "Tom and Jerry ate one half of it at thirty degrees Celsius."),
    ("Pi is 3.14, call 555-1234.", "Pi is three point one four, call five five five, one two three four."),
    ("No digits here.", "No digits here."),
])
def test_english(text, spoken):
    assert normalize_for_tts(text, "en") == spoken


@pytest.mark.parametrize("text, spoken", [
    ("2024年3月5日下午3:30出发。", "二零二四年三月五日下午三点三十分出发。"),
    ("会议在2024-03-05举行。", "会议在二零二四年三月五日举行。"),
    ("我花了¥1,250买了2个苹果。", "我花了一千二百五十元买了两个苹果。"),
    ("门票$20，增长了3.5%。", "门票二十美元，增长了百分之三点五。"),
    ("温度25℃，距离10km，有3-5个人。", "温度二十五摄氏度，距离十公里，有三到五个人。"),
    ("电话13812345678，房间0302。", "电话一三八一二三四五六七八，房间零三零二。"),
    ("第3章，-5度，１２３号。", "第三章，负五度，一百二十三号。"),
])
def test_chinese(text, spoken):
    assert normalize_for_tts(text, "zh") == spoken


@pytest.mark.parametrize("number, spoken", [
    (0, "零"), (10, "十"), (12, "十二"), (110, "一百一十"), (1005, "一千零五"), (1500, "一千五百"),
    (10005, "一万零五"), (12000, "一万二千"), (100010, "十万零一十"), (100000000, "一亿"), ("3.14", "三点一四"),
])
def test_chinese_numbers(number, spoken):
    assert chinese_number(number) == spoken


def test_other_languages_get_numbers_only():
    assert normalize_for_tts("Es kostet 5 Euro", "de") == "Es kostet fünf Euro"
    assert normalize_for_tts("  1  x ", "xx") == "1 x"  # no number words for the language: left as written
