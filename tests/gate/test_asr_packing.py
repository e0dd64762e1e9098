"""faster-whisper's packed windows: several short clips in one 30-second window, split back by segment timestamps,
and the clips the split cannot place decoded alone. Real tiny.en on real Piper clips, and the split's rules on
hand-made segments."""

import numpy as np
import pytest

from s2sbench.pipeline.gate.asr import check_asr_options, get_asr, packing
from s2sbench.pipeline.gate.asr.packing import Placement, PackedWindow, Segment, pack, parse_segments, split
from s2sbench.pipeline.gate.asr.whisper_common import SAMPLE_RATE_HZ, WINDOW_SAMPLES
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.gate.verify import error_rate

SENTENCES = [
    "The old fisherman rowed his boat across the quiet lake at dawn.",
    "My sister bought twelve green apples at the market yesterday.",
    "A yellow kite was stuck in the branches of the tall oak tree.",
    "Our teacher read us a story about a brave little mouse.",
]


@pytest.fixture(scope="module")
def clips(speak_clip, piper_voice):
    return [speak_clip(text, piper_voice, item_id=f"pack{index}")[1] for index, text in enumerate(SENTENCES)]


@pytest.fixture(scope="module")
def packed_asr(fw_asr):
    return get_asr("faster-whisper", "tiny.en", batch_size=4, pack_clips=True)


def assert_each_has_its_sentence(transcripts: list[str], order: list[int]) -> None:
    for index, transcript in zip(order, transcripts):
        rates = [error_rate(text, transcript, "en").rate for text in SENTENCES]
        assert rates[index] <= 0.15 and rates.index(min(rates)) == index, (index, transcript)


def test_each_clip_gets_its_own_sentence_from_one_packed_window(clips, packed_asr, fw_asr):
    assert len(pack([len(clip) for clip in clips])) == 1  # all four share a window
    before = (packed_asr.packing.packed, packed_asr.packing.redone)
    assert_each_has_its_sentence(packed_asr.transcribe(clips, "en"), [0, 1, 2, 3])
    assert (packed_asr.packing.packed - before[0], packed_asr.packing.redone - before[1]) == (4, 0)  # no fallback
    order = [2, 0, 3, 1]  # each transcript follows its clip, wherever the clip sits in the window
    assert_each_has_its_sentence(packed_asr.transcribe([clips[i] for i in order], "en"), order)
    assert_each_has_its_sentence(fw_asr.transcribe(clips, "en"), [0, 1, 2, 3])  # one at a time: the same verdicts


def test_clips_the_split_cannot_place_are_decoded_alone(clips, packed_asr, fw_asr, monkeypatch):
    monkeypatch.setattr(packing, "UNCOVERED_S", -1.0)  # every clip counts as partly unheard: all unresolved
    before = (packed_asr.packing.packed, packed_asr.packing.redone)
    heard = packed_asr.transcribe(clips, "en")
    assert (packed_asr.packing.packed - before[0], packed_asr.packing.redone - before[1]) == (4, 4)
    assert heard == fw_asr.transcribe(clips, "en")  # exactly the one-window-a-clip transcripts


def test_a_silent_clip_between_speech_is_decoded_alone_with_its_neighbours(clips, packed_asr, fw_asr):
    silence = np.zeros(2 * SAMPLE_RATE_HZ, dtype=np.float32)
    batch = [clips[0], silence, clips[1], clips[2]]
    before = (packed_asr.packing.packed, packed_asr.packing.redone)
    heard = packed_asr.transcribe(batch, "en")
    redone = packed_asr.packing.redone - before[1]
    assert redone >= 3  # the silent clip gets no segment: it and both neighbours are decoded alone
    alone = fw_asr.transcribe(batch, "en")
    assert heard[:3] == alone[:3]
    assert error_rate(SENTENCES[2], heard[3], "en").rate <= 0.15


def test_a_clip_too_long_to_share_a_window_is_decoded_as_without_packing(clips, packed_asr, fw_asr):
    long_clip = np.concatenate([clips[0], np.zeros(27 * SAMPLE_RATE_HZ - len(clips[0]), np.float32)])
    before = (packed_asr.packing.packed, packed_asr.packing.redone)
    assert packed_asr.transcribe([long_clip, clips[1]], "en") == fw_asr.transcribe([long_clip, clips[1]], "en")
    assert (packed_asr.packing.packed, packed_asr.packing.redone) == before  # two windows of one clip each


def test_pack_fills_windows_in_order_and_gives_a_long_clip_its_own():
    second = SAMPLE_RATE_HZ
    windows = pack([5 * second, 10 * second, 12 * second, 29 * second, 3 * second])
    assert [[p.index for p in window.placements] for window in windows] == [[0, 1], [2], [3], [4]]
    first, following = windows[0].placements
    assert (first.start_s, first.end_s) == (0.0, 5.0)
    assert following.start_s == 5.0 + packing.GAP_S  # silence between them
    assert len(windows[0].audio([np.ones(5 * second, np.float32), np.ones(10 * second, np.float32)])) == WINDOW_SAMPLES


TB = 50364  # a multilingual model's first timestamp token


def ts(seconds: float) -> int:
    return TB + round(seconds / packing.TIMESTAMP_S)


def test_timestamped_tokens_parse_into_segments():
    tokens = [ts(0), 1, 2, ts(2.0), ts(2.0), 3, ts(4.0), ts(5.0), ts(5.2), 4, ts(6.0)]
    assert parse_segments(tokens, TB) == [Segment(0.0, 2.0, (1, 2)), Segment(2.0, 4.0, (3,)), Segment(5.2, 6.0, (4,))]
    assert parse_segments([1, ts(1.0)], TB) is None  # text before any timestamp
    assert parse_segments([ts(0), 1, ts(1.0), ts(1.0), 2], TB) is None  # a segment left open
    assert parse_segments([ts(0), 1, ts(3.0), ts(2.0), 2, ts(4.0)], TB) is None  # time going back


def window_of(*spans: tuple[float, float]) -> PackedWindow:
    return PackedWindow([Placement(index, start, end) for index, (start, end) in enumerate(spans)])


def test_segments_go_to_the_clip_they_cover_and_ambiguous_clips_stay_unresolved():
    window = window_of((0.0, 3.0), (5.0, 8.0), (10.0, 12.0))
    clean = [Segment(0.0, 1.5, (1,)), Segment(1.5, 3.2, (2,)), Segment(4.9, 8.1, (3,)), Segment(9.8, 12.0, (4,))]
    assert split(window, clean) == {0: [1, 2], 1: [3], 2: [4]}
    straddling = [Segment(0.0, 6.0, (1,)), Segment(6.0, 8.0, (2,)), Segment(10.0, 12.0, (3,))]  # 1 s into clip 1
    assert split(window, straddling) == {2: [3]}
    in_a_gap = [Segment(0.0, 3.0, (1,)), Segment(3.2, 4.8, (9,)), Segment(5.0, 8.0, (2,)), Segment(10.0, 12.0, (3,))]
    assert split(window, in_a_gap) == {2: [3]}
    unheard = [Segment(0.0, 3.0, (1,)), Segment(10.0, 12.0, (3,))]  # nothing for clip 1: its words may sit in 0 or 2
    assert split(window, unheard) == {}
    cut_short = [Segment(0.0, 3.0, (1,)), Segment(5.0, 8.0, (2,)), Segment(10.0, 10.8, (3,))]  # clip 2's end unheard
    assert split(window, cut_short) == {0: [1], 1: [2]}


def test_pack_clips_is_a_checked_option_recorded_in_the_model_id(packed_asr, fw_asr):
    assert packed_asr.model_id == fw_asr.model_id + ":packed" and fw_asr.pack_clips is False
    with pytest.raises(ConfigError, match=r"option 'pack_clips': Input should be a valid boolean, got 'yes'"):
        check_asr_options("faster-whisper", {"pack_clips": "yes"})
    with pytest.raises(ConfigError, match=r"unknown option 'pack_clip'.*did you mean 'pack_clips'\?"):
        check_asr_options("faster-whisper", {"pack_clip": True})
    with pytest.raises(ConfigError, match="unknown option 'pack_clips'"):
        check_asr_options("openai-whisper", {"pack_clips": True})
