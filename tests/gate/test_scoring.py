"""Normalization and error rates: the figures are jiwer's on the normalized strings, with S/D/I kept."""

import jiwer
import pytest

from s2sbench.pipeline.text.languages import error_metric
from s2sbench.pipeline.gate.verify import error_rate, normalize, score_normalized


@pytest.mark.parametrize(
    ("reference", "hypothesis"),
    [
        ("Mr. Smith bought 3 colour pencils.", "Mister Smith bought three color pencils"),
        ("It's twenty-five past ten!", "it is 25 past 10"),
    ],
)
def test_english_normalizer_forgives_numbers_spelling_and_case(reference, hypothesis):
    assert error_rate(reference, hypothesis, "en").rate == 0.0


def test_chinese_is_cer_after_simplification_and_punctuation():
    score = error_rate("我們學習漢語。", "我们 学习汉语", "zh")
    assert (score.metric, score.rate, score.reference, score.hypothesis) == ("cer", 0.0, "我们学习汉语", "我们学习汉语")
    assert error_metric("ja") == "ker" and error_metric("zh-CN") == "cer" and error_metric("de") == "wer"
    assert error_metric("th") == "cer"


def test_other_languages_use_the_basic_normalizer():
    assert normalize("¡Hola, Señor García!", "es") == "hola señor garcía"


@pytest.mark.parametrize(
    ("reference", "hypothesis", "language"),
    [
        ("the cat sat on the mat", "the cat sat on a mat today", "en"),
        ("she went home early", "went home", "en"),
        ("我们今天去公园散步", "我门今天去公园了散步步", "zh"),
        ("他说：你好！", "她说你好吗", "zh"),
    ],
)
def test_error_rate_matches_jiwer_on_the_normalized_strings(reference, hypothesis, language):
    score = error_rate(reference, hypothesis, language)
    ref, hyp = normalize(reference, language), normalize(hypothesis, language)
    expected = jiwer.cer(ref, hyp) if score.metric == "cer" else jiwer.wer(ref, hyp)
    assert score.rate == pytest.approx(expected)
    n_ref = len(ref) if score.metric == "cer" else len(ref.split())
    assert score.rate == pytest.approx((score.substitutions + score.deletions + score.insertions) / n_ref)


def test_counts_are_kept():
    score = score_normalized("a b c d", "a x c d e", "wer")
    assert (score.substitutions, score.deletions, score.insertions) == (1, 0, 1)
    assert score.rate == pytest.approx(0.5)


def test_empty_reference_counts_every_heard_word_as_an_error():
    assert score_normalized("", "", "wer").rate == 0.0
    heard = score_normalized("", "hello there", "wer")
    assert (heard.rate, heard.insertions) == (1.0, 2)
    with pytest.raises(ValueError, match="unknown metric 'ter'"):
        score_normalized("a", "a", "ter")


def test_chinese_numbers_count_the_same_in_digits_and_hanzi():
    from s2sbench.pipeline.gate.verify import error_rate

    assert error_rate("我买了三个苹果", "我买了3个苹果", "zh").rate == 0.0
    assert error_rate("花了十二点五元", "花了12.5元", "zh").rate == 0.0
    assert error_rate("二零二四年三月五日", "2024年3月5日", "zh").rate == 0.0
    assert error_rate("我买了三个苹果", "我买了4个苹果", "zh").substitutions == 1


@pytest.mark.parametrize(
    ("reference", "hypothesis", "rate"),
    [
        ("李华把车扔进河里", "李華把車扔進合理", 0.0),  # 河里 / 合理: he2 li3 both, heard alike
        ("他买了一只鸭子", "她买了一支鸭子", 0.0),  # ta1, zhi1: no listener can tell them apart
        ("李华回家了", "立滑回家了", 0.2),  # li3 -> li4: a wrong tone is a wrong syllable
        ("小明去上学了", "小明去上雪冷", 2 / 6),  # xue2 -> xue3, le5 -> leng3
        ("十分钟后", "10分钟后", 0.0),  # numbers read out before the syllables are counted
    ],
)
def test_mandarin_ser_counts_tonal_syllables_not_characters(reference, hypothesis, rate):
    score = error_rate(reference, hypothesis, "zh", "ser")
    assert score.metric == "ser" and score.rate == pytest.approx(rate)
    assert error_rate(reference, hypothesis, "zh").rate >= score.rate  # CER never forgives less


def test_ser_is_refused_outside_mandarin_and_japanese_is_always_ker():
    from s2sbench.pipeline.text.languages import gate_metric

    assert gate_metric("ser", "zh-CN") == "ser" and gate_metric("wer", "zh") == "cer" and gate_metric("ser", "zh") == "ser"
    assert gate_metric("wer", "ja") == gate_metric("cer", "ja-JP") == gate_metric("ker", "ja") == "ker"
    assert gate_metric("wer", "th") == "cer" and gate_metric("cer", "en") == "cer"
    for language in ("zh", "en"):
        with pytest.raises(ValueError, match="metric ker counts the morae of a Japanese kana reading"):
            gate_metric("ker", language)
    for language in ("ja", "en"):
        with pytest.raises(ValueError, match="metric ser counts Mandarin pinyin syllables"):
            gate_metric("ser", language)
