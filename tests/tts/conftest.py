"""Fixtures for the synthesis tests: a tiny random-weight Coqui VITS saved as a local model directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from s2sbench.pipeline.audio import ClipStore
from s2sbench.pipeline.tts.base import Voice


def build_tiny_vits(folder: Path) -> Path:
    """A 1.3M-parameter VITS with random weights (it speaks noise): the real Coqui load and inference path,
    saved the way a trained model is (``model.pth`` + ``config.json``)."""
    import torch
    from TTS.tts.configs.shared_configs import CharactersConfig
    from TTS.tts.configs.vits_config import VitsConfig
    from TTS.tts.models.vits import Vits, VitsArgs

    args = VitsArgs(
        hidden_channels=16, hidden_channels_ffn_text_encoder=32, num_heads_text_encoder=2, num_layers_text_encoder=1,
        num_layers_flow=1, num_layers_posterior_encoder=1, upsample_initial_channel_decoder=32,
        resblock_kernel_sizes_decoder=[3], resblock_dilation_sizes_decoder=[[1, 3, 5]],
        upsample_rates_decoder=[8, 8, 4], upsample_kernel_sizes_decoder=[16, 16, 8], init_discriminator=False,
    )
    characters = CharactersConfig(
        characters_class="TTS.tts.models.vits.VitsCharacters", characters="abcdefghijklmnopqrstuvwxyz ",
        punctuations=".,!?'-", pad="<PAD>", eos="<EOS>", bos="<BOS>", blank="<BLNK>",
    )
    config = VitsConfig(model_args=args, use_phonemes=False, text_cleaner="basic_cleaners", characters=characters)
    config.audio.sample_rate = 16000
    torch.manual_seed(0)
    model = Vits(config)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict()}, folder / "model.pth")
    config.save_json(str(folder / "config.json"))
    return folder


@pytest.fixture(scope="session")
def tiny_vits_dir(tmp_path_factory) -> Path:
    return build_tiny_vits(tmp_path_factory.mktemp("tiny-vits"))


@pytest.fixture
def coqui_voice(tiny_vits_dir) -> Voice:
    # The random decoder's output is noise at any level; loudness checks are not what this voice tests.
    return Voice(id="coqui-tiny", engine="coqui", language="en", model=str(tiny_vits_dir), licence="test weights")


@pytest.fixture
def store(tmp_path) -> ClipStore:
    return ClipStore(tmp_path / "clips")
