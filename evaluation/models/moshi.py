"""Moshi (Kyutai) through transformers' ``MoshiForConditionalGeneration``: T->T, S->T and S->S.

Moshi models three streams at 12.5 frames a second: its own text (the "inner monologue"), its own speech and the
user's speech, each speech stream as 8 Mimi codebooks (codebook 0 semantic, 1-7 acoustic, delayed by one frame). At
each frame the temporal transformer reads the sum of the stream embeddings; it predicts the next text token, and the
depth transformer then predicts the next frame's 8 codes of Moshi's own speech. How the requests are laid out:

* T->T: the text stream alone (context tokens, then the continuation), as a text LM;
* S->T: the template's instruction (if any) as text, then the context audio in the **user** stream while Moshi's text
  stream is padded (``PAD`` ... ``EPAD``), then the continuation's text tokens one per frame; only those are scored;
* S->S: context and continuation audio in **Moshi's own** stream (the only one it predicts), text stream padded; the
  continuation frames' codes are scored (``audio_codebooks=1``: the semantic codebook only, the default; 8: all).

A stream with nothing in it (the user after the context, Moshi's speech in S->T) gets zero embeddings, as the
``moshi`` package does for its "zero token". Moshi was never trained on text packed one token per frame, nor on
padded text under its own speech, so these are this harness's conventions; docs/paper-models.md gives the published
numbers a faithful run should approach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.evaluation.models.causal import resolve_device, resolve_dtype
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import sha256_bytes

ABSENT = -1  # a stream position with nothing in it: zero embedding
#: the ``moshi`` package's text ids: PAD between words, EPAD (end of padding) right before a word
MOSHI_TEXT_PAD_ID, MOSHI_TEXT_EPAD_ID = 3, 0


@dataclass(frozen=True)
class Streams:
    """One request laid out on frames: ``text`` (frames), ``moshi`` and ``user`` (codebooks x frames, delayed), and
    what is scored: text columns, and (column, codebook) cells of Moshi's speech."""

    text: np.ndarray
    moshi: np.ndarray
    user: np.ndarray
    scored_text: tuple[int, ...] = ()
    scored_audio: tuple[tuple[int, int], ...] = ()


def delay(codes: np.ndarray, initial: int, n_columns: int, first: int = 1) -> np.ndarray:
    """Codes (codebooks x frames) in Moshi's input layout: column 0 holds the initial token, frame ``f`` of the
    semantic codebook sits in column ``first + f`` and of the acoustic codebooks one column later; as in
    transformers' delay pattern, the acoustic codebooks start with ``initial`` in column ``first`` and the semantic
    one ends with it in the column after its last frame; every other cell is ``ABSENT``."""
    n_codebooks, n_frames = codes.shape
    out = np.full((n_codebooks, n_columns), ABSENT, dtype=np.int64)
    out[:, 0] = initial
    out[0, first : first + n_frames] = codes[0]
    out[1:, first] = initial
    out[1:, first + 1 : first + 1 + n_frames] = codes[1:]
    if first + n_frames < n_columns:
        out[0, first + n_frames] = initial
    return out


def lay_out(mode: str, context: Any, continuation: Any, *, prefix: list[int], n_codebooks: int, text_initial: int,
            audio_initial: int, audio_codebooks: int = 1) -> Streams:
    """Streams of one request. Text parts (``prefix``, and the context or continuation in text) are token lists;
    speech parts are codes (codebooks x frames)."""
    silent = np.zeros((n_codebooks, 0), dtype=np.int64)
    if mode == "T->T":
        text = [text_initial, *prefix, *context, *continuation]
        n_columns = len(text)
        return Streams(np.array(text), delay(silent, ABSENT, n_columns), delay(silent, ABSENT, n_columns),
                       scored_text=tuple(range(n_columns - len(continuation), n_columns)))
    if mode == "S->T":
        n_context = context.shape[1]
        # the instruction (if any) as text before the user speaks, PAD while the user speaks, EPAD, then the words
        text = [text_initial, *prefix] + [MOSHI_TEXT_PAD_ID] * n_context + [MOSHI_TEXT_EPAD_ID, *continuation]
        n_columns = len(text)
        return Streams(np.array(text), delay(silent, ABSENT, n_columns),
                       delay(context, audio_initial, n_columns, first=1 + len(prefix)),
                       scored_text=tuple(range(n_columns - len(continuation), n_columns)))
    if mode == "S->S":
        codes = np.concatenate([context, continuation], axis=1)
        n_context = context.shape[1]
        n_columns = codes.shape[1] + 2  # the last frame's acoustic codes land one column late
        text = [text_initial] + [MOSHI_TEXT_PAD_ID] * (n_columns - 1)
        scored = [(n_context + 1 + f + (k > 0), k)
                  for f in range(continuation.shape[1]) for k in range(audio_codebooks)]
        return Streams(np.array(text), delay(codes, audio_initial, n_columns),
                       delay(silent, ABSENT, n_columns), scored_audio=tuple(scored))
    raise AdapterError(f"moshi does not score {mode}")


def request_mode(request: Request) -> str:
    speech_context = isinstance(request.context, Audio)
    speech_continuation = isinstance(request.continuation, Audio)
    if speech_continuation and not speech_context:
        raise AdapterError(f"moshi does not score T->S (group '{request.group}'): it cannot read text as context "
                           "of its own speech")
    return {(False, False): "T->T", (True, False): "S->T", (True, True): "S->S"}[(speech_context, speech_continuation)]


class MoshiAdapter(ModelAdapter):
    name = "moshi"
    modes = frozenset({"T->T", "S->T", "S->S"})
    speech_languages = frozenset({"en"})
    kind = "full-duplex speech LM"

    def __init__(self, model: str = "kmhf/hf-moshiko", *, revision: str | None = None, dtype: Any = None,
                 device: str | None = None, audio_codebooks: int = 1, label: str | None = None) -> None:
        from transformers import AutoTokenizer, MoshiForConditionalGeneration

        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.tokenizer = AutoTokenizer.from_pretrained(model, revision=revision)
        self.model = MoshiForConditionalGeneration.from_pretrained(model, revision=revision, dtype=self.dtype)
        self.model = self.model.to(self.device).eval()
        config = self.model.config
        if not 1 <= audio_codebooks <= config.num_codebooks:
            raise ConfigError(f"audio_codebooks must be 1..{config.num_codebooks}, got {audio_codebooks}")
        self.audio_codebooks = audio_codebooks
        self.sample_rate_hz = config.audio_encoder_config.sampling_rate
        self._model_id = label or model + (f"@{revision}" if revision else "")
        self._codes: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return self._model_id

    def mimi_codes(self, audio: Audio) -> np.ndarray:
        """Mimi codes (codebooks x frames) of one clip, resampled to Mimi's rate; cached by the audio's hash."""
        import torch
        import torchaudio

        samples = np.ascontiguousarray(audio.samples, dtype=np.float32)
        key = f"{audio.sample_rate_hz}:{sha256_bytes(samples.tobytes())}"
        if key not in self._codes:
            wave = torch.from_numpy(samples)
            if audio.sample_rate_hz != self.sample_rate_hz:
                wave = torchaudio.functional.resample(wave, audio.sample_rate_hz, self.sample_rate_hz)
            with torch.inference_mode():
                codes = self.model.audio_encoder.encode(wave[None, None].to(self.device, self.dtype),
                                                        num_quantizers=self.model.config.num_codebooks)[0]
            self._codes[key] = codes[0].cpu().numpy()
        return self._codes[key]

    def text_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def streams(self, request: Request) -> Streams:
        mode = request_mode(request)
        # S->S has no text stream to put an instruction in; T->T reads it as the start of the context
        prefix = self.text_ids(request.context_prefix) if mode == "S->T" and request.context_prefix else []
        context = (self.text_ids(request.context_prefix + request.context) if isinstance(request.context, str)
                   else self.mimi_codes(request.context))
        continuation = (self.text_ids(request.continuation) if isinstance(request.continuation, str)
                        else self.mimi_codes(request.continuation))
        config = self.model.config
        streams = lay_out(mode, context, continuation, prefix=prefix, n_codebooks=config.num_codebooks,
                          text_initial=config.vocab_size, audio_initial=config.audio_vocab_size,
                          audio_codebooks=self.audio_codebooks)
        if not streams.scored_text and not streams.scored_audio:
            raise AdapterError(f"{self.name}: continuation of group '{request.group}' has no tokens")
        if len(streams.text) > config.max_position_embeddings:
            raise AdapterError(f"{self.name}: group '{request.group}' needs {len(streams.text)} frames, more than the "
                               f"model's {config.max_position_embeddings}")
        return streams

    def _embed(self, streams: Streams) -> Any:
        import torch

        def lookup(table: Any, ids: np.ndarray) -> Any:
            ids = torch.from_numpy(ids).to(self.device)
            present = (ids != ABSENT).unsqueeze(-1)
            return table(ids.clamp(min=0)) * present

        n = self.model.config.num_codebooks
        embeds = lookup(self.model.decoder.model.embed_tokens, streams.text)
        for k in range(n):
            embeds = embeds + lookup(self.model.embed_tokens[k], streams.moshi[k])
            embeds = embeds + lookup(self.model.embed_tokens[n + k], streams.user[k])
        return embeds[None]

    def score(self, streams: Streams) -> list[float]:
        """Log-probabilities of the scored text tokens, then of the scored speech codes, in column order."""
        import torch

        with torch.inference_mode():
            output = self.model.decoder(inputs_embeds=self._embed(streams), return_dict=True)
            per_token: list[float] = []
            if streams.scored_text:
                columns = torch.tensor(streams.scored_text, device=self.device)
                logprobs = torch.log_softmax(output.logits[0, columns - 1].float(), dim=-1)
                targets = torch.from_numpy(streams.text[list(streams.scored_text)]).to(self.device)
                per_token += logprobs.gather(-1, targets[:, None])[:, 0].tolist()
            if streams.scored_audio:
                columns = sorted({column for column, _ in streams.scored_audio})
                depth_ids = np.concatenate([streams.text[None, columns], streams.moshi[:-1, columns]]).T
                hidden = output.last_hidden_state[0, [c - 1 for c in columns]][:, None]
                depth = self.model.depth_decoder(last_hidden_state=hidden,
                                                 input_ids=torch.from_numpy(depth_ids).to(self.device))
                logprobs = torch.log_softmax(depth.logits.float(), dim=-1)
                row = {column: index for index, column in enumerate(columns)}
                per_token += [logprobs[row[c], k, int(streams.moshi[k, c])].item() for c, k in streams.scored_audio]
        return per_token

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        results = []
        for request in requests:
            per_token = self.score(self.streams(request))
            results.append(LogLikelihood(sum(per_token), len(per_token), tuple(per_token)))
        return results
