"""LLM chat clients (an OpenAI-compatible HTTP API, or a local transformers chat model), an on-disk response cache,
and the LLM rewriter for sCMMLU.

Requests are deterministic (temperature 0 / greedy decoding) and cached by the hash of (model, messages, limits), so
rebuilding a set re-sends nothing and gives the same text. Settings come from the task's candidate options or the
environment: ``S2SBENCH_LLM_BASE_URL``, ``S2SBENCH_LLM_MODEL``, ``S2SBENCH_LLM_API_KEY`` (or ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import abc
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from s2sbench.pipeline.core.errors import BackendError, ConfigError
from s2sbench.pipeline.core.manifest import stable_hash, write_json
from s2sbench.pipeline.items.rewrite.base import LETTERS, Question, RewriteRejected, Rewriter, Statements
from s2sbench.pipeline.core.schema import StrictSection, validate

Messages = list[dict[str, str]]
DEFAULT_CACHE_DIR = Path("~/.cache/s2sbench/llm")


class LLMError(BackendError):
    """The LLM service or model failed (not a bad rewrite): the build stops rather than dropping every item."""


class LLMSettingsError(ConfigError):
    """LLM settings that cannot make a chat model (no model, no server address, an unknown setting)."""


class LLMSettings(StrictSection):
    """The ``llm`` settings of a task's candidate construction; unset ones fall back to ``S2SBENCH_LLM_*``."""

    backend: Literal["openai", "transformers"] = "openai"
    base_url: str | None = None  # of an OpenAI-compatible server
    model: str | None = None
    api_key_env: str | None = None  # the environment variable holding the API key (default S2SBENCH_LLM_API_KEY)
    gguf_file: str | None = None  # a GGUF checkpoint inside ``model`` (transformers backend)
    cache_dir: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_tokens: int | None = Field(default=None, ge=1)  # of one reply (default: the caller's)


class ChatModel(abc.ABC):
    #: what determines the replies (endpoint and model): part of the cache key
    identity: str = ""

    @abc.abstractmethod
    def complete(self, messages: Messages, max_tokens: int) -> str:
        """The assistant's reply to ``messages``, decoded deterministically."""


class OpenAIChat(ChatModel):
    """``POST {base_url}/chat/completions`` of any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, ...)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 120.0):
        self.base_url, self.model, self.api_key, self.timeout_s = base_url.rstrip("/"), model, api_key, timeout_s
        self.identity = f"openai:{self.base_url}:{model}"

    def complete(self, messages: Messages, max_tokens: int) -> str:
        body = {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(body).encode("utf-8"), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                reply = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")[:300]
            raise LLMError(f"{self.base_url}: HTTP {error.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise LLMError(f"{self.base_url}: cannot reach the chat API ({error}); is the server running?") from None
        try:
            return reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self.base_url}: unexpected reply shape: {json.dumps(reply)[:300]}") from None


class TransformersChat(ChatModel):
    """A local chat model through transformers (a hub id or a folder; ``gguf_file`` for a GGUF checkpoint)."""

    def __init__(self, model: str, gguf_file: str | None = None):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        kwargs = {"gguf_file": gguf_file} if gguf_file else {}
        self.tokenizer = AutoTokenizer.from_pretrained(model, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(model, **kwargs).eval()
        self.identity = f"transformers:{model}" + (f":{gguf_file}" if gguf_file else "")

    def complete(self, messages: Messages, max_tokens: int) -> str:
        import torch

        inputs = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with torch.no_grad():
            output = self.model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False)
        return self.tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)


class CachedChat:
    """A chat model behind a content-addressed cache: one JSON file per distinct request."""

    def __init__(self, model: ChatModel, cache_dir: str | Path | None = None):
        self.model = model
        self.cache_dir = Path(cache_dir or DEFAULT_CACHE_DIR).expanduser()
        self.hits = self.misses = 0

    def complete(self, messages: Messages, max_tokens: int = 512) -> str:
        request = {"model": self.model.identity, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        path = self.cache_dir / f"{stable_hash(request)}.json"
        if path.exists():
            self.hits += 1
            return json.loads(path.read_text(encoding="utf-8"))["reply"]
        reply = self.model.complete(messages, max_tokens)
        write_json(path, {"request": request, "reply": reply})
        self.misses += 1
        return reply


def make_chat(options: dict[str, Any], where: str = "LLM settings") -> CachedChat:
    """A cached chat model from ``options`` (:class:`LLMSettings`; ``max_tokens`` is for the caller), with the
    ``S2SBENCH_LLM_*`` environment variables as fallbacks; ``where`` names the settings in errors."""
    settings = validate(LLMSettings, options, where, LLMSettingsError)
    model = settings.model or os.environ.get("S2SBENCH_LLM_MODEL")
    if not model:
        raise LLMSettingsError(f"{where}: no model (set llm.model in the task or S2SBENCH_LLM_MODEL)")
    if settings.backend == "openai":
        base_url = settings.base_url or os.environ.get("S2SBENCH_LLM_BASE_URL")
        if not base_url:
            raise LLMSettingsError(f"{where}: no base_url (set llm.base_url in the task or S2SBENCH_LLM_BASE_URL)")
        api_key = os.environ.get(settings.api_key_env or "S2SBENCH_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY")
        chat: ChatModel = OpenAIChat(base_url, model, api_key, settings.timeout_s)
    else:
        chat = TransformersChat(model, settings.gguf_file)
    return CachedChat(chat, settings.cache_dir or os.environ.get("S2SBENCH_LLM_CACHE"))


SYSTEM = "你是一个严谨的中文改写助手，只按要求的格式输出。"
INSTRUCTIONS = """把下面的选择题改写成四个陈述句，每个选项一句。四句的前半句必须完全相同，且不含任何选项的内容；后半句必须包含该选项的原文。每行格式为“字母|前半句|后半句”，只输出四行，不要解释。

题目：中国的首都是哪座城市？
A. 上海
B. 北京
C. 广州
D. 深圳
输出：
A|中国的首都是|上海
B|中国的首都是|北京
C|中国的首都是|广州
D|中国的首都是|深圳
"""


def rewrite_messages(question: Question) -> Messages:
    options = "\n".join(f"{letter}. {option}" for letter, option in zip(LETTERS, question.options))
    user = f"{INSTRUCTIONS}\n题目：{question.text}\n{options}\n输出："
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_rewrite(reply: str, n_options: int) -> Statements:
    """Read ``A|first half|second half`` lines; the four first halves must be identical."""
    found: dict[str, tuple[str, str]] = {}
    for line in reply.splitlines():
        parts = [part.strip() for part in line.strip().split("|")]
        if len(parts) == 3 and parts[0].rstrip(".．:：、") in LETTERS and parts[0][:1] not in found:
            found[parts[0][:1]] = (parts[1], parts[2])
    missing = [letter for letter in LETTERS[:n_options] if letter not in found]
    if missing:
        raise RewriteRejected(f"reply has no 'letter|first|second' line for {', '.join(missing)}")
    firsts = {found[letter][0] for letter in LETTERS[:n_options]}
    if len(firsts) != 1:
        raise RewriteRejected(f"first halves differ: {sorted(firsts)}")
    return Statements(firsts.pop(), tuple(found[letter][1] for letter in LETTERS[:n_options]))


class LLMRewriter(Rewriter):
    name = "llm"

    def __init__(self, chat: CachedChat | None = None, **options: Any):
        self.chat = chat or make_chat(options)
        self.max_tokens = int(options.get("max_tokens", 256))

    def rewrite(self, question: Question) -> Statements:
        reply = self.chat.complete(rewrite_messages(question), self.max_tokens)
        return parse_rewrite(reply, len(question.options))
