"""Fixtures of the adapter tests; the models and speech come from :mod:`tiny_models`."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.evaluation.models.tiny_models import speak_en, train_tokenizer


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


@pytest.fixture(scope="session")
def spoken_contexts():
    return speak_en(["Karen was assigned a roommate her first year of college.", "Their first meeting went well."])
