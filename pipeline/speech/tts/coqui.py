"""Coqui TTS (the maintained ``coqui-tts`` fork, import name ``TTS``): any model it can load.

``voice.model`` is a hub name (``tts_models/en/vctk/vits``, ``tts_models/multilingual/multi-dataset/xtts_v2``) that
Coqui downloads on first use, or a local model directory holding a checkpoint (``model.pth``, ``model_file.pth``,
``checkpoint.pth`` or ``best_model.pth``) and its ``config.json``. ``voice.speaker`` is a speaker id of a
multi-speaker model, or a reference recording (``.wav``/``.flac``/``.mp3``) that a cloning model such as XTTS-v2
imitates. Multilingual models get ``options.language`` or the voice's language (``zh`` becomes XTTS's ``zh-cn``).

Determinism: torch's generator is seeded with the clip's seed before every call, which makes CPU inference
repeatable (VITS noise, XTTS sampling).
"""

from __future__ import annotations

import importlib.metadata
import threading
from functools import cache
from pathlib import Path

import numpy as np

from s2sbench.pipeline.machine.cpu import limit_torch_threads
from s2sbench.pipeline.machine.device import device_suffix, engine_device, torch_device
from s2sbench.pipeline.core.manifest import sha256_file
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform

CHECKPOINT_NAMES = ("model.pth", "model_file.pth", "checkpoint.pth", "best_model.pth", "model_file.pth.tar")
REFERENCE_SUFFIXES = {".wav", ".flac", ".mp3", ".ogg"}
# Coqui's multilingual models name some languages differently from ISO 639-1.
COQUI_LANGUAGE = {"zh": "zh-cn"}


def local_checkpoint(model: str) -> tuple[Path, Path] | None:
    """(checkpoint, config) of a local model directory, or None when ``model`` is not a directory."""
    folder = Path(model).expanduser()
    if not folder.is_dir():
        return None
    config = folder / "config.json"
    checkpoints = [folder / name for name in CHECKPOINT_NAMES if (folder / name).exists()]
    if not config.exists() or not checkpoints:
        raise SynthesisError(f"coqui model directory {folder} needs config.json and one of {', '.join(CHECKPOINT_NAMES)}")
    return checkpoints[0], config


def reference_wav(voice: Voice) -> Path | None:
    """The reference recording of a cloning voice, or None when ``voice.speaker`` is a speaker id (or unset)."""
    if voice.speaker is None or Path(voice.speaker).suffix.lower() not in REFERENCE_SUFFIXES:
        return None
    path = Path(voice.speaker).expanduser()
    if not path.exists():
        raise SynthesisError(f"voice '{voice.id}': reference recording not found: {path}")
    return path


@cache
def _file_hash(path: Path) -> str:
    return sha256_file(path)[:16]


def hub_download_state(model: str) -> str | None:
    """None when hub model ``model`` is on this machine, else why not (unknown name, or still to download)."""
    from TTS.utils.manage import ModelManager
    from trainer.io import get_user_data_dir

    entry = ModelManager(progress_bar=False).models_dict
    for part in model.split("/"):
        entry = entry.get(part) if isinstance(entry, dict) else None
    if not isinstance(entry, dict):
        return f"unknown coqui model '{model}' (not a local model directory, not in Coqui's model list: `tts --list_models`)"
    if "repo_id" in entry:  # fetched from the Hugging Face Hub into its cache (XTTS-v2)
        from huggingface_hub import try_to_load_from_cache

        present = isinstance(try_to_load_from_cache(entry["repo_id"], "config.json"), str)
    else:
        present = (Path(get_user_data_dir("tts")) / model.replace("/", "--")).is_dir()
    if present:
        return None
    return f"coqui model '{model}' is not downloaded yet (Coqui fetches it on first use; needs network)"


class CoquiOptions(StrictSection):
    language: str | None = None  # of a multilingual model (default: the voice's, zh as XTTS's zh-cn)
    split_sentences: bool = True


class CoquiEngine(TTSEngine):
    name = "coqui"
    Options = CoquiOptions

    def __init__(self) -> None:
        self._loaded: dict[str, object] = {}
        # torch's generator is global: two threads seeding and sampling at once would mix their noise, so calls
        # (and loads) are serialized; torch already uses the cores within one call.
        self._lock = threading.Lock()

    def model_version(self, voice: Voice) -> str:
        parts = [f"coqui-tts=={importlib.metadata.version('coqui-tts')}"]
        local = local_checkpoint(voice.model)
        if local is None:
            parts.append(f"hub={voice.model}")
        else:
            parts.append(f"checkpoint-sha256={_file_hash(local[0])};config-sha256={_file_hash(local[1])}")
        reference = reference_wav(voice)
        if reference is not None:
            parts.append(f"reference-sha256={_file_hash(reference)}")
        return ";".join(parts) + device_suffix(torch_device(engine_device()))

    def missing(self, voice: Voice) -> str | None:
        try:
            if local_checkpoint(voice.model) is None:
                why = hub_download_state(voice.model)
                if why is not None:
                    return why
            reference_wav(voice)
        except SynthesisError as error:
            return str(error)
        return None

    def _tts(self, model: str):
        if model not in self._loaded:
            from TTS.api import TTS

            limit_torch_threads()
            local = local_checkpoint(model)
            try:
                if local is None:
                    self._loaded[model] = TTS(model, progress_bar=False)
                else:
                    self._loaded[model] = TTS(model_path=str(local[0]), config_path=str(local[1]), progress_bar=False)
            except (OSError, KeyError, ValueError, RuntimeError) as error:
                raise SynthesisError(f"coqui could not load model '{model}': {error}") from error
            self._loaded[model].to(torch_device(engine_device()))
        return self._loaded[model]

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        with self._lock:
            return self._synthesize_locked(text, voice, seed)

    def _synthesize_locked(self, text: str, voice: Voice, seed: int) -> Waveform:
        import torch

        tts = self._tts(voice.model)
        kwargs: dict[str, object] = {"split_sentences": bool(voice.options.get("split_sentences", True))}
        reference = reference_wav(voice)
        if reference is not None:
            kwargs["speaker_wav"] = str(reference)
        elif voice.speaker is not None:
            kwargs["speaker"] = voice.speaker
        if tts.is_multi_lingual:
            kwargs["language"] = voice.options.get("language", COQUI_LANGUAGE.get(voice.language, voice.language))
        torch.manual_seed(seed)
        try:
            with torch.inference_mode():
                samples = tts.tts(text, **kwargs)
        except (ValueError, RuntimeError, KeyError) as error:
            raise SynthesisError(f"coqui failed on voice '{voice.id}': {error}") from error
        return Waveform(
            samples=np.asarray(samples, dtype=np.float32).reshape(-1),
            sample_rate_hz=int(tts.synthesizer.output_sample_rate),
        )


def tiny_random_vits(folder: Path, speakers: tuple[str, ...] = ()) -> Path:
    """Save a 1.3M-parameter VITS with random weights (it speaks noise) as a local model directory.

    For tests and benchmarks of the Coqui code path where no trained weights can be downloaded: it is loaded and
    run exactly as a trained local model would be (``model.pth`` + ``config.json``, and ``speakers.pth`` when
    ``speakers`` names the speakers of a multi-speaker model).
    """
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
    folder.mkdir(parents=True, exist_ok=True)
    speaker_manager = None
    if speakers:
        from TTS.tts.utils.speakers import SpeakerManager

        torch.save({name: index for index, name in enumerate(speakers)}, folder / "speakers.pth")
        config.model_args.use_speaker_embedding = True
        config.model_args.speakers_file = str(folder / "speakers.pth")
        config.model_args.speaker_embedding_channels = 8
        config.num_speakers = len(speakers)
        speaker_manager = SpeakerManager(speaker_id_file_path=str(folder / "speakers.pth"))
    torch.manual_seed(0)
    model = Vits(config, speaker_manager=speaker_manager)
    torch.save({"model": model.state_dict()}, folder / "model.pth")
    config.save_json(str(folder / "config.json"))
    return folder
