"""Helpers of the paper-model tests: a character-level tokenizer and short synthetic clips (a module with a unique
name, so test files import it without clashing with other folders' conftest modules)."""

from __future__ import annotations

import numpy as np

CHARS = list(dict.fromkeys("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ .,:'!?\n"
                            "下面是一段语音和文本交错的内容：他们去了音乐会。"))  # unique: one id each


def char_tokenizer(special: list[str] | None = None, *, add_bos: bool = False):
    """One token per character (plus ``special`` tokens), so a test can count the scored tokens by eye; ``add_bos``
    makes it put ``<s>`` first by default, as Llama's tokenizer does."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: index for index, token in enumerate(["<unk>", "<s>", "</s>", "<pad>"] + CHARS)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    backend.decoder = decoders.Fuse()
    if add_bos:
        backend.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", bos_token="<s>",
                                        eos_token="</s>", pad_token="<pad>")
    if special:
        tokenizer.add_special_tokens({"additional_special_tokens": special})
    return tokenizer


def clip(seed: int, duration_s: float = 1.0, sample_rate_hz: int = 16000):
    """A reproducible 'utterance': a few tones of random pitch with noise, as adapter Audio."""
    from s2sbench.evaluation.models import Audio

    rng = np.random.default_rng(seed)
    n = int(duration_s * sample_rate_hz)
    t = np.arange(n) / sample_rate_hz
    pitch = np.repeat(rng.uniform(120, 400, size=5), -(-n // 5))[:n]
    samples = 0.3 * np.sin(2 * np.pi * pitch * t) + 0.05 * rng.standard_normal(n)
    return Audio(samples.astype(np.float32), sample_rate_hz)




def tiny_llama(vocab_size: int):
    """A random-weight Llama (2 layers, width 32)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                                        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                        max_position_embeddings=1024))


def fbank_projector(hidden_size: int, frames_per_embedding: int = 4):
    """A small real audio front-end for the embedding-splice adapters: 80-bin Kaldi fbank (as Freeze-Omni's
    processor computes it), averaged over ``frames_per_embedding`` frames, through a fixed random projection."""
    import torch
    import torchaudio.compliance.kaldi as kaldi

    torch.manual_seed(1)
    projection = torch.randn(80, hidden_size) * 0.02

    def embed(audio):
        wave = torch.from_numpy(audio.samples)[None] * 32768
        features = kaldi.fbank(wave, dither=0, frame_length=25, frame_shift=10, num_mel_bins=80)
        n = len(features) // frames_per_embedding * frames_per_embedding
        pooled = features[:n].reshape(-1, frames_per_embedding, 80).mean(1)
        return pooled @ projection

    return embed


def plain_scores(adapter, requests):
    """The adapter's scores with shared-prefix reuse switched off (restored afterwards), to compare against."""
    adapter.shared_prefix = False
    try:
        return adapter.loglikelihood(requests)
    finally:
        adapter.shared_prefix = True
