"""Small real inputs for test fixtures: tones whose pitch tells them apart (16 kHz PCM-16 WAV bytes), a byte-level
tokenizer and a tiny random-weight GPT2."""

from pathlib import Path

import numpy as np

from s2sbench.pipeline.speech.audio import wav_bytes

SAMPLE_RATE_HZ = 16_000


def tone(frequency_hz: float, duration_s: float, amplitude: float = 0.3, rate: int = SAMPLE_RATE_HZ) -> np.ndarray:
    t = np.arange(int(duration_s * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * frequency_hz * t)).astype(np.float32)


def tone_wav(seed: int, duration_s: float) -> bytes:
    """A distinct 16 kHz wav per seed: a tone whose pitch depends on the seed."""
    return wav_bytes(tone(180 + 37 * seed, duration_s), SAMPLE_RATE_HZ)


def byte_tokenizer():
    """A byte-level tokenizer with no merges: every UTF-8 byte is a token, so English and Chinese both encode."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: index for index, symbol in enumerate(alphabet)}
    vocab["<|endoftext|>"] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


def save_tiny_gpt2(path: Path, seed: int) -> Path:
    """A random-weight GPT2 (2 layers, width 32) with the byte tokenizer, saved in ``path``: a real text LM for
    the hf-causal adapter."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = byte_tokenizer()
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=512, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
