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


@pytest.fixture(scope="session")
def tiny_moshi_dir(tmp_path_factory) -> Path:
    """A random-weight Moshi (temporal 2 layers x 32, depth 1 layer x 16) over a tiny Mimi (8 codebooks of 64 codes,
    random centroids so clips get varied codes), saved with the character tokenizer."""
    import torch
    from tests.evaluation.models_paper.paper_helpers import char_tokenizer
    from transformers import MimiConfig, MoshiConfig, MoshiForConditionalGeneration

    path = tmp_path_factory.mktemp("tiny-moshi")
    tokenizer = char_tokenizer()
    mimi = MimiConfig(hidden_size=32, num_filters=4, codebook_size=64, codebook_dim=16, num_quantizers=8,
                      vector_quantization_hidden_dimension=16, upsample_groups=32, num_hidden_layers=1,
                      intermediate_size=64, num_attention_heads=2, num_key_value_heads=2, sliding_window=50)
    config = MoshiConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         ffn_dim=64, num_codebooks=8, max_position_embeddings=512, audio_encoder_config=mimi.to_dict(),
                         depth_decoder_config={"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                                               "ffn_dim": 32, "sliding_window": 8})
    torch.manual_seed(0)
    model = MoshiForConditionalGeneration(config)
    for module in model.audio_encoder.modules():
        if hasattr(module, "embed_sum"):
            module.embed_sum.normal_()
            module._embed = None
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_unit_encoder(tiny_hubert_dir):
    """The tiny HuBERT with 20 k-means units fitted on its layer-2 features of a few clips: a real small speech
    tokenizer standing in for a family's own (GLM-4-Voice's VQ-Whisper, Spirit LM's HuBERT)."""
    import numpy as np
    from tests.evaluation.models_paper.paper_helpers import clip

    from s2sbench.evaluation.models.units import UnitEncoder, fit_kmeans

    encoder = UnitEncoder(str(tiny_hubert_dir), np.zeros((20, 32), dtype=np.float32), layer=2)
    features = np.concatenate([encoder.features(clip(seed)) for seed in range(4)])
    encoder.centroids = fit_kmeans(features, 20, seed=0)
    return encoder

