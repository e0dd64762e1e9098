"""Tiny real components for the paper-model tests: random-weight encoders and LMs built from small configs and saved
like hub checkpoints, so every stage (features, k-means, Mimi codes, LM scoring) runs for real in seconds on a CPU."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_hubert_dir(tmp_path_factory) -> Path:
    """A random-weight HubertModel (2 layers, width 32, 320-sample hop: 50 frames a second)."""
    import torch
    from transformers import HubertConfig, HubertModel

    path = tmp_path_factory.mktemp("tiny-hubert")
    torch.manual_seed(0)
    config = HubertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                          conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    HubertModel(config).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_unit_lm_dir(tmp_path_factory) -> Path:
    """A random-weight Llama over 3 special tokens + 20 units, with TWIST's ``offset`` in its config."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path = tmp_path_factory.mktemp("tiny-unit-lm")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=23, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512)
    config.offset = 3
    LlamaForCausalLM(config).save_pretrained(path)
    return path
