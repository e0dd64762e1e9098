"""Japanese read aloud (OpenJTalk): the spoken text a voice reads and the kana reading the gate scores."""

import pytest

from s2sbench.pipeline.gate.verify import error_rate
from s2sbench.pipeline.text.japanese import kana_reading, morae, spoken_japanese
from s2sbench.pipeline.text.normalize import normalize_for_tts


@pytest.mark.parametrize("text, spoken", [
    ("2024年3月5日に3本のペンを買った。", "二千二十四年サンガツ五日に三本のペンを買った。"),  # counters keep their reading
    ("気温は25℃、距離は3.5km、確率は50%です。", "気温は二十五ド、距離は三テン五キロメートル、確率は五十パーセントです。"),
    ("PCとiPhoneでNHKを見る", "ピーシーとアイフォンでエヌエイチケイを見る"),
    ("事象 B が起こる", "事象ビーが起こる"),  # a lone letter by its Japanese name
    ("この3つの中で", "このミッツの中で"),
    ("砂漠には必需品な物は？", "砂漠には必需品な物は?"),  # kanji and kana stay as written, full-width signs folded
    # English words OpenJTalk does not know, which it would spell letter by letter, as a Japanese speaker says them
    ("この country の airport へ", "このカントリーのエアポートへ"),
    ("neiborの家でmusical instrumentを弾く", "ネイバーの家でミュージカルインストルメントを弾く"),
    ("DNAとiPhone", "ディーエヌエイとアイフォン"),  # an acronym spelt; iPhone, unknown in this sentence, read by e2k
])
def test_the_spoken_text_writes_out_what_is_not_kanji_or_kana(text, spoken):
    assert spoken_japanese(text) == spoken
    assert spoken_japanese(spoken) == spoken  # read once, the same again
    assert kana_reading(text) == kana_reading(spoken)


def test_a_japanese_task_records_the_spoken_text():
    assert normalize_for_tts("３本のペン", "ja") == "三本のペン"


def test_the_kana_reading_folds_spellings_of_one_sound():
    assert kana_reading("東京へ行く") == kana_reading("とうきょうへいく")  # kanji or kana, one reading
    assert kana_reading("本を読む") == kana_reading("ほんおよむ")  # を is read オ
    assert kana_reading("「はい」、と言った。") == "ハイトイッタ"  # punctuation out
    assert morae("キャッシュー") == ["キャ", "ッ", "シュ", "ー"]


def test_kana_error_rate_counts_a_misheard_word_not_its_spelling():
    same = error_rate("砂漠には必需品な物は？", "さばくにはひつじゅひんなものは", "ja")
    assert same.metric == "ker" and same.rate == 0.0
    misheard = error_rate("砂漠には必需品な物は？", "砂漠には必要品な物は", "ja")  # another word: over the gate
    assert misheard.metric == "ker" and 0.15 < misheard.rate < 0.5


def test_the_margin_reads_both_texts_as_the_judge_writes_them():
    """The reference margin scores the question as written against the transcript: the question's ？ and the judge's
    spaces are no words (with them, no misheard Japanese attempt came within 20 nats of its transcript)."""
    from s2sbench.pipeline.gate.verify import written_form

    assert written_form("砂漠には必需品な物は？") == written_form("砂漠には 必需品な物は") == "砂漠には必需品な物は"
    assert written_form("ＰＣで「メール」を送る。") == "PCでメールを送る"
