"""The ASR backends on real audio: the offline tiny.en through both engines, batching, long clips, conversion."""

import copy

import numpy as np
import pytest

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.gate.asr.faster_whisper import FasterWhisperASR, RecentEncodings
from s2sbench.pipeline.gate.asr.whisper_common import pad_to_window
from s2sbench.pipeline.gate.asr.base import TranscriptionError
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.gate.asr.offline import OfflineModelError, ct2_to_openai, openai_checkpoint
from s2sbench.pipeline.gate.verify import error_rate

SENTENCES = [
    "The old fisherman rowed his boat across the quiet lake at dawn.",
    "My sister bought twelve green apples at the market yesterday.",
]


@pytest.fixture(scope="module")
def clips(speak_clip, piper_voice):
    return [speak_clip(text, piper_voice, item_id=f"asr{index}")[1] for index, text in enumerate(SENTENCES)]


def test_both_backends_give_the_same_transcript_on_real_tts(clips, fw_asr, ow_asr):
    fast = fw_asr.transcribe(clips, "en")
    reference = ow_asr.transcribe(clips, "en")
    assert fast == reference
    for text, heard in zip(SENTENCES, fast):
        assert error_rate(text, heard, "en").rate <= 0.15, heard


def test_a_batch_on_parallel_replicas_gives_the_one_at_a_time_transcripts(clips):
    single = get_asr("faster-whisper", "tiny.en", batch_size=1)
    assert single is get_asr("faster-whisper", "tiny.en", batch_size=1) and single.workers == 1
    batched = get_asr("faster-whisper", "tiny.en", batch_size=4, num_workers=2)  # two replicas of one thread each
    assert batched is not single and batched.workers == 2
    assert batched.transcribe(clips * 2, "en") == single.transcribe(clips, "en") * 2


def test_a_beam_search_is_its_own_model_id_on_both_backends(clips):
    from s2sbench.pipeline.core.errors import ConfigError

    greedy = get_asr("faster-whisper", "tiny.en").transcribe(clips, "en")
    for engine in ("faster-whisper", "openai-whisper"):
        beam = get_asr(engine, "tiny.en", beam_size=5)
        assert beam.model_id.split(":beam5")[0] != beam.model_id and beam.beam_size == 5
        heard = beam.transcribe(clips, "en")
        for text, greedy_heard, beam_heard in zip(SENTENCES, greedy, heard):
            assert error_rate(text, beam_heard, "en").rate <= max(0.15, error_rate(text, greedy_heard, "en").rate)
    with pytest.raises(ConfigError, match="beam_size must be >= 1"):
        get_asr("faster-whisper", "tiny.en", beam_size=0)


@pytest.mark.slow
def test_a_clip_longer_than_30_s_uses_long_form_transcription(clips, fw_asr):
    long_clip = np.concatenate(clips * 6)  # about 40 s
    assert len(long_clip) / 16000 > 30
    heard = fw_asr.transcribe([clips[0], long_clip], "en")
    assert error_rate(" ".join(SENTENCES * 6), heard[1], "en").rate <= 0.15, heard[1]


def test_english_only_model_declares_its_languages(fw_asr, ow_asr):
    for asr in (fw_asr, ow_asr):
        assert asr.languages() == {"en"}
        assert asr.supports("en-US") and not asr.supports("zh")
        with pytest.raises(ValueError, match="cannot transcribe 'zh'"):
            asr.transcribe([np.zeros(16000, np.float32)], "zh")


def test_bad_audio_is_a_transcription_error(fw_asr):
    with pytest.raises(TranscriptionError, match="clip 1: no samples"):
        fw_asr.transcribe([np.zeros(16000, np.float32), np.zeros(0, np.float32)], "en")
    with pytest.raises(TranscriptionError, match="NaN"):
        fw_asr.transcribe([np.full(100, np.nan, np.float32)], "en")


def test_registry_errors_name_the_choices():
    with pytest.raises(ValueError, match=r"unknown ASR engine 'wav2vec' \(known: faster-whisper, openai-whisper"):
        get_asr("wav2vec", "tiny.en")
    with pytest.raises(ValueError, match="int8 needs the faster-whisper engine"):
        get_asr("openai-whisper", "tiny.en", compute_type="int8")


@pytest.fixture(scope="module")
def tiny_whisper():
    """A tiny random-weight Whisper (transformers) and its logits on a random input, before conversion."""
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(
        vocab_size=51864, num_mel_bins=80, d_model=64, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
    )
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(config).eval()
    mel, tokens = torch.randn(1, 80, 3000), torch.tensor([[50257, 50362, 100, 200]])
    with torch.no_grad():
        logits = model(input_features=mel, decoder_input_ids=tokens).logits
    return model, mel, tokens, logits


def _save_ct2(model, directory, quantization):
    from ctranslate2.converters.transformers import WhisperLoader

    spec = WhisperLoader().get_model_spec(copy.deepcopy(model))  # optimize() rewrites the weights it is given
    spec.register_vocabulary([f"token{index}" for index in range(model.config.vocab_size)])
    spec.validate()
    spec.optimize(quantization=quantization)
    directory.mkdir(parents=True)
    spec.save(str(directory))
    return directory


@pytest.mark.slow
@pytest.mark.parametrize(("quantization", "tolerance"), [(None, 1e-5), ("int8", 0.05)])
def test_ct2_conversion_reproduces_the_original_model(tiny_whisper, tmp_path, quantization, tolerance):
    import torch
    from whisper.model import ModelDimensions, Whisper

    model, mel, tokens, expected = tiny_whisper
    checkpoint = ct2_to_openai(_save_ct2(model, tmp_path / "ct2", quantization))
    converted = Whisper(ModelDimensions(**checkpoint["dims"]))
    converted.load_state_dict({name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in checkpoint["model_state_dict"].items()})
    with torch.no_grad():
        logits = converted(mel, tokens)
    assert float((logits - expected).abs().max()) < tolerance


@pytest.mark.slow
def test_converted_checkpoint_is_cached_by_content(tiny_whisper, tmp_path):
    directory = _save_ct2(tiny_whisper[0], tmp_path / "ct2", None)
    first = openai_checkpoint(directory, cache_dir=tmp_path / "cache")
    stamp = first.stat().st_mtime_ns
    assert openai_checkpoint(directory, cache_dir=tmp_path / "cache") == first
    assert first.stat().st_mtime_ns == stamp
    assert list((tmp_path / "cache").iterdir()) == [first]


def test_not_a_model_directory(tmp_path):
    with pytest.raises(OfflineModelError, match="no model.bin"):
        ct2_to_openai(tmp_path)
    (tmp_path / "model.bin").write_bytes(b"\x06\x00\x00\x00\x05\x00")
    with pytest.raises(OfflineModelError, match="truncated"):
        ct2_to_openai(tmp_path)


@pytest.mark.slow
def test_cpu_float32_gives_the_int8_transcripts(clips, fw_asr):
    exact = get_asr("faster-whisper", "tiny.en", compute_type="float32")
    assert exact.model_id.endswith(":float32") and fw_asr.model_id.endswith(":int8")
    assert exact.transcribe(clips, "en") == fw_asr.transcribe(clips, "en")


def test_both_backends_score_a_given_text_on_the_clip(clips, fw_asr, ow_asr):
    """The judge made to read a text: the spoken sentence is far likelier than one with two words changed, the same on
    both backends (int8 against float32 weights), and a clip longer than a window is not scored."""
    changed = SENTENCES[0].replace("fisherman", "teacher").replace("lake", "road")
    fast = fw_asr.score_texts(clips[0], [SENTENCES[0], changed], "en")
    reference = ow_asr.score_texts(clips[0], [SENTENCES[0], changed], "en")
    assert fast[0] > fast[1] + 10 and reference[0] > reference[1] + 10, (fast, reference)
    assert fast == pytest.approx(reference, abs=2.0)
    assert fw_asr.score_texts(clips[0], [""], "en") == [0.0]
    assert fw_asr.score_texts(np.concatenate([clips[0]] * 12), [SENTENCES[0]], "en") is None


def test_scoring_a_transcribed_clip_reuses_its_encoding(clips):
    """The reference margin scores clips the gate has just transcribed: the aligner starts from the encoder output of
    that transcription, and the scores are those of a fresh encoding."""
    gate, fresh = FasterWhisperASR("tiny.en", num_workers=1), FasterWhisperASR("tiny.en", num_workers=1)
    gate.transcribe(clips[:2], "en")
    assert gate._recent.get(pad_to_window(clips[0])) is not None
    assert fresh._recent.get(pad_to_window(clips[0])) is None
    texts = [SENTENCES[0], SENTENCES[1]]
    assert gate.score_texts(clips[0], texts, "en") == pytest.approx(fresh.score_texts(clips[0], texts, "en"), abs=1e-3)


def test_a_window_cut_to_the_clip_hears_it_for_less_and_is_its_own_model_id(clips):
    """The encoder sees the clip and 10 s of silence instead of 30 s: the same words, a third less encoder work (timed
    in bench/ and docs/verification.md, not here), a model id of its own; clips of different lengths are decoded one
    a call, on parallel replicas the same as alone; the reference margin is scored on the same cut window."""
    full = get_asr("faster-whisper", "tiny.en", batch_size=1)
    cut = get_asr("faster-whisper", "tiny.en", window_pad_s=10.0, batch_size=1)
    assert cut.model_id == full.model_id.replace(":int8", ":int8:cut10s")
    heard = cut.transcribe(clips, "en")
    for text, transcript in zip(SENTENCES, heard):
        assert error_rate(text, transcript, "en").rate <= 0.15, transcript
    uneven = [clips[0], clips[1][: len(clips[1]) // 2], clips[1]]
    on_replicas = get_asr("faster-whisper", "tiny.en", window_pad_s=10.0, batch_size=4, num_workers=2)
    assert on_replicas.transcribe(uneven, "en") == cut.transcribe(uneven, "en")
    window = cut._window(clips[0])
    assert len(window) == len(clips[0]) + 10 * 16000 and len(cut._window(np.zeros(25 * 16000, np.float32))) == 30 * 16000
    assert cut._recent.get(window) is not None
    changed = SENTENCES[0].replace("fisherman", "teacher").replace("lake", "road")
    scores = cut.score_texts(clips[0], [SENTENCES[0], changed], "en")
    assert scores[0] > scores[1] + 10, scores
    with pytest.raises(ConfigError, match="window_pad_s must be between 0 and 30"):
        get_asr("faster-whisper", "tiny.en", window_pad_s=45.0)
    with pytest.raises(ConfigError, match="choose one"):
        get_asr("faster-whisper", "tiny.en", window_pad_s=5.0, pack_clips=True)


def test_recent_encodings_keep_to_their_size():
    recent = RecentEncodings(max_bytes=3 * 4000)
    windows = [np.full(10, index, dtype=np.float32) for index in range(4)]
    recent.put(windows, np.zeros((4, 1000), dtype=np.float32))
    assert [recent.get(window) is not None for window in windows] == [False, True, True, True]
    recent.put(windows[1:2], np.ones((1, 1000), dtype=np.float32))  # again: now the newest
    recent.put([np.full(10, 9, dtype=np.float32)], np.zeros((1, 1000), dtype=np.float32))
    assert recent.get(windows[1]) is not None and recent.get(windows[2]) is None
    assert recent.get(windows[1])[0] == 1.0
