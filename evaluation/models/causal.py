"""Fast log-likelihood scoring shared by every adapter built on a transformers causal LM (text or speech).

An adapter turns a request into token ids (a prefix and the scored continuation) plus, for speech, the extra model
inputs of its prefix (audio features). This module does the rest:

* shared-prefix path (default): requests whose prefixes are identical (the candidates of one item) run the prefix
  once with ``use_cache=True``; the candidates then run as one batch on copies of that KV cache, so a context of
  L tokens costs L once instead of once per candidate;
* plain path (``shared_prefix=False``): one full forward per (prefix + continuation), batched by length for text;
  this is what the shared-prefix path is checked against and what the speed bench compares with.

Log-probabilities are taken from float32 log-softmax whatever dtype the model runs in.
"""

from __future__ import annotations

import abc
import copy
import functools
import inspect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from s2sbench.evaluation.models.base import AdapterError, LogLikelihood, ModelAdapter, Request
from s2sbench.pipeline.machine.device import engine_device, torch_device
from s2sbench.pipeline.core.errors import ConfigError

_DTYPES = {"float32": "float32", "fp32": "float32", "bfloat16": "bfloat16", "bf16": "bfloat16",
           "float16": "float16", "fp16": "float16"}


def resolve_device(device: str | None) -> str:
    """``None``/``"auto"``: the run's device (``--device``, :mod:`s2sbench.pipeline.machine.device`) where torch can use it."""
    if device in (None, "auto"):
        return torch_device(engine_device())
    return device


def resolve_dtype(dtype: Any, device: str) -> Any:
    """``None``/``"auto"``: bfloat16 on CUDA, float32 on CPU (CPU bf16 matmuls are slow and lose precision)."""
    import torch

    if dtype in (None, "auto"):
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype not in _DTYPES:
        raise ConfigError(f"unknown dtype '{dtype}' (known: auto, {', '.join(sorted(_DTYPES))})")
    return getattr(torch, _DTYPES[dtype])


@dataclass(frozen=True)
class Encoded:
    """A request as the model sees it: prefix ids (with extra prefix inputs such as audio features), then the
    continuation ids that are scored. ``prefix_key`` is equal for requests whose prefixes are identical."""

    prefix_ids: tuple[int, ...]
    continuation_ids: tuple[int, ...]
    prefix_key: str
    prefix_inputs: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def encode_text_pair(tokenizer: Any, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """Token ids of (context, continuation) exactly as lm-evaluation-harness's ``loglikelihood`` makes them.

    The context's trailing spaces move to the continuation; the continuation's ids are those of
    ``context + continuation`` after the context's ids; an empty context becomes BOS (else EOS). Where a token of
    ``context + continuation`` spans the boundary, the continuation is tokenized on its own instead.
    """
    if context == "":
        prefix_token = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
        cont = tokenizer.encode(continuation, add_special_tokens=False)
        if cont and cont[0] == prefix_token:
            return cont[:1], cont[1:]
        return [prefix_token], cont
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation

    def encode(text: str) -> list[int]:
        # the tokenizer's own special-token default, unless the text already starts with BOS (as lm-eval does)
        bos = tokenizer.bos_token
        if bos and text.startswith(bos):
            return tokenizer.encode(text, add_special_tokens=False)
        return tokenizer.encode(text)

    context_ids = encode(context)
    whole = encode(context + continuation)
    if whole[: len(context_ids)] == context_ids:
        return context_ids, whole[len(context_ids):]
    # A token spans the boundary (Chinese joins context and continuation with nothing between: Gemma's '是中国' is one
    # token). lm-eval's split would score part of the context or lose part of the continuation, or nothing at all;
    # the continuation's own tokens after the context's score exactly the continuation's text.
    return context_ids, tokenizer.encode(continuation, add_special_tokens=False)


def _chunks(items: Sequence[int], size: int) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class CausalLMAdapter(ModelAdapter):
    """Base of the transformers adapters: subclasses load ``self.model`` and implement :meth:`encode`."""

    def __init__(self, *, device: str | None = None, dtype: Any = None, batch_size: int = 32,
                 shared_prefix: bool = True) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.batch_size = batch_size
        self.shared_prefix = shared_prefix
        self.model: Any = None
        self.pad_token_id = 0

    @abc.abstractmethod
    def encode(self, request: Request) -> Encoded:
        """Token ids (and extra prefix inputs) of one request; the continuation must have at least one token."""

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        import torch

        encoded = [self.encode(request) for request in requests]
        for request, item in zip(requests, encoded):
            if not item.prefix_ids:
                raise AdapterError(f"{self.name}: request of group '{request.group}' has an empty prefix")
            if not item.continuation_ids:
                raise AdapterError(f"{self.name}: continuation of group '{request.group}' has no tokens")
        results: list[LogLikelihood | None] = [None] * len(requests)
        with torch.inference_mode():
            if self.shared_prefix:
                self._score_shared(encoded, results)
            else:
                self._score_plain(encoded, results)
        return [result for result in results if result is not None]

    def _prepare(self, with_audio: bool) -> None:
        """Called before each prefix (shared path) or batch (plain path); families whose weights depend on the
        modality (a LoRA active only with audio) switch here."""

    def _forward(self, **inputs: Any) -> Any:
        return self.model(**inputs, return_dict=True)

    @functools.cached_property
    def _cache_name(self) -> str:
        """transformers 5.x renamed ``past_key_values`` to ``cache`` (argument and output); older releases and
        remote code keep the old name."""
        return "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    def _keep_logits(self, positions: int) -> dict[str, int]:
        """``logits_to_keep`` where the model takes it: the last positions' logits only, which spares a
        (tokens x vocabulary) tensor for long prefixes."""
        return {"logits_to_keep": positions} if self._takes_logits_to_keep else {}

    @functools.cached_property
    def _takes_logits_to_keep(self) -> bool:
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _to_device(self, inputs: dict[str, Any]) -> dict[str, Any]:
        import torch

        moved = {}
        for key, value in inputs.items():
            if isinstance(value, torch.Tensor):
                value = value.to(self.device)
                if value.is_floating_point():
                    value = value.to(self.dtype)
            moved[key] = value
        return moved

    def _score_shared(self, encoded: list[Encoded], results: list[LogLikelihood | None]) -> None:
        groups: dict[str, list[int]] = {}
        for index, item in enumerate(encoded):
            groups.setdefault(item.prefix_key, []).append(index)
        text_groups = []
        for indices in groups.values():
            if encoded[indices[0]].prefix_inputs:
                self._score_group(encoded, indices, results)  # audio: features are encoded per item
            else:
                text_groups.append(indices)
        # Longest prefix first so that similar lengths share a forward pass; whole items are packed until a pass
        # holds batch_size continuations (an item with more candidates than that gets a pass of its own).
        text_groups.sort(key=lambda indices: -len(encoded[indices[0]].prefix_ids))
        batch: list[list[int]] = []
        for indices in text_groups:
            if batch and sum(map(len, batch)) + len(indices) > self.batch_size:
                self._score_text_groups(encoded, batch, results)
                batch = []
            batch.append(indices)
        if batch:
            self._score_text_groups(encoded, batch, results)

    def _score_text_groups(self, encoded: list[Encoded], groups: list[list[int]],
                           results: list[LogLikelihood | None]) -> None:
        """Two forward passes for many items: their prefixes (all but the last token) as one right-padded batch
        that fills the KV cache, then every candidate of every item as one row that starts with its prefix's last
        token, attends to its own item's cache rows (attention mask) and continues its positions (position ids).
        On CPU a small model's pass costs about the same for 50 tokens as for 500 (the weights are read once per
        pass), so the number of passes, not of tokens, sets the speed."""
        import torch

        heads = [encoded[indices[0]].prefix_ids for indices in groups]
        cached = [head[:-1] for head in heads]
        width = max(len(ids) for ids in cached)
        row_group = [g for g, indices in enumerate(groups) for _ in indices]
        row_index = [index for indices in groups for index in indices]
        rows = [[heads[g][-1], *encoded[i].continuation_ids[:-1]] for g, i in zip(row_group, row_index)]
        length = max(len(row) for row in rows)
        inputs: dict[str, Any] = {
            "input_ids": torch.tensor([row + [self.pad_token_id] * (length - len(row)) for row in rows],
                                      device=self.device),
            "position_ids": torch.tensor([[len(cached[g]) + k for k in range(length)] for g in row_group],
                                         device=self.device),
        }
        row_mask = torch.tensor([[1] * len(row) + [0] * (length - len(row)) for row in rows], device=self.device)
        self._prepare(False)
        if width:
            prefix_mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in cached], device=self.device)
            ids = torch.tensor([list(ids) + [self.pad_token_id] * (width - len(ids)) for ids in cached],
                               device=self.device)
            output = self._forward(input_ids=ids, attention_mask=prefix_mask, use_cache=True, **self._keep_logits(1))
            cache = getattr(output, self._cache_name)
            select = torch.tensor(row_group, device=self.device)
            cache.batch_select_indices(select)
            inputs.update({self._cache_name: cache, "use_cache": True,
                           "attention_mask": torch.cat([prefix_mask[select], row_mask], dim=1)})
        else:  # every prefix is a single token: nothing to cache
            inputs["attention_mask"] = row_mask
        logits = self._forward(**inputs).logits
        for row, index in enumerate(row_index):
            cont = encoded[index].continuation_ids
            span = torch.log_softmax(logits[row, : len(cont)].float(), dim=-1)
            per_token = span.gather(-1, torch.tensor(cont, device=self.device)[:, None])[:, 0].tolist()
            results[index] = LogLikelihood(sum(per_token), len(per_token), tuple(per_token))

    def _score_group(self, encoded: list[Encoded], indices: list[int], results: list[LogLikelihood | None]) -> None:
        """One item with extra prefix inputs (audio): its prefix runs once, then its candidates on copies of
        that KV cache."""
        import torch

        head = encoded[indices[0]]
        self._prepare(bool(head.prefix_inputs))
        prefix = torch.tensor([head.prefix_ids], device=self.device)
        output = self._forward(input_ids=prefix, use_cache=True, **self._keep_logits(1),
                               **self._to_device(head.prefix_inputs))
        first = torch.log_softmax(output.logits[0, -1].float(), dim=-1)
        cache = getattr(output, self._cache_name)
        chunks = list(_chunks(indices, self.batch_size))
        for chunk in chunks:
            conts = [encoded[i].continuation_ids for i in chunk]
            rest_len = max(len(c) for c in conts) - 1
            rest = None
            if rest_len > 0:
                chunk_cache = copy.deepcopy(cache) if len(chunks) > 1 else cache
                chunk_cache.batch_repeat_interleave(len(chunk))
                # Right padding needs no attention mask: a real token never attends to a later pad.
                ids = torch.tensor([list(c[:-1]) + [self.pad_token_id] * (rest_len - len(c) + 1) for c in conts],
                                   device=self.device)
                rest = torch.log_softmax(
                    self._forward(input_ids=ids, use_cache=True, **{self._cache_name: chunk_cache}).logits.float(),
                    dim=-1)
            for row, (index, cont) in enumerate(zip(chunk, conts)):
                per_token = [first[cont[0]].item()]
                if len(cont) > 1:
                    targets = torch.tensor(cont[1:], device=self.device)
                    per_token += rest[row, : len(cont) - 1].gather(-1, targets[:, None])[:, 0].tolist()
                results[index] = LogLikelihood(sum(per_token), len(cont), tuple(per_token))

    def _score_plain(self, encoded: list[Encoded], results: list[LogLikelihood | None]) -> None:
        import torch

        # Longest first, as lm-eval does: an out-of-memory error shows up in the first batch, and similar lengths
        # share a batch so little is spent on padding. Requests with extra prefix inputs (audio) run one by one.
        order = sorted(range(len(encoded)), key=lambda i: -(len(encoded[i].prefix_ids) + len(encoded[i].continuation_ids)))
        text_only = [i for i in order if not encoded[i].prefix_inputs]
        batches = list(_chunks(text_only, self.batch_size)) + [[i] for i in order if encoded[i].prefix_inputs]
        for batch in batches:
            rows = [list(encoded[i].prefix_ids) + list(encoded[i].continuation_ids)[:-1] for i in batch]
            width = max(len(row) for row in rows)
            ids = torch.tensor([row + [self.pad_token_id] * (width - len(row)) for row in rows], device=self.device)
            mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in rows], device=self.device)
            extra = self._to_device(encoded[batch[0]].prefix_inputs)
            self._prepare(bool(extra))
            # only positions from the earliest continuation on are scored: long (audio) prefixes need no logits
            kept = width - min(len(encoded[i].prefix_ids) - 1 for i in batch)
            options = self._keep_logits(kept)
            logits = self._forward(input_ids=ids, attention_mask=mask, **options, **extra).logits
            offset = width - logits.shape[1]  # 0 when the model ignores logits_to_keep
            for row, index in enumerate(batch):
                item = encoded[index]
                start = len(item.prefix_ids) - 1 - offset
                targets = torch.tensor(item.continuation_ids, device=self.device)
                span = torch.log_softmax(logits[row, start : start + len(targets)].float(), dim=-1)
                per_token = span.gather(-1, targets[:, None])[:, 0].tolist()
                results[index] = LogLikelihood(sum(per_token), len(per_token), tuple(per_token))
