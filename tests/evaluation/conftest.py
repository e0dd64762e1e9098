"""Fixtures for the evaluation tests: a small build written by the real assembly (``finish_build``) around tone clips,
a deterministic toy adapter (the scores are generated test input, like the generated losses of the scoring tests),
and tiny real GPT2 checkpoints loaded through the hf-causal adapter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from s2sbench.evaluation.models.base import Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.pipeline.run.assemble import finish_build, task_report
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.buildfolder.build_report import Integrity
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.manifest import stable_hash
from s2sbench.pipeline.core.records import BuildRow, Clip, ClipCheck, Item, Role, Source
from s2sbench.pipeline.items.sources import LoadResult
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.catalog.tasks import load_task

from tests.factories import byte_tokenizer, save_tiny_gpt2, tone_wav

SAMPLE_RATE_HZ = 16_000
STORY_VOICES = ("voice-a", "voice-b")
STORIES = [
    ("Maya planted seeds by the window. She watered them daily.", ["The plants grew tall.", "The plants sang opera."], 0),
    ("Owen bought a used guitar. He practiced every evening.", ["He ate the guitar.", "He learned a song."], 1),
    ("The bus was late again. Lena waited in the rain.", ["She got on the bus.", "She flew home on a cloud."], 0),
    ("Sam lost his keys. He searched the whole house.", ["He found them in his coat.", "He sold the house at once."], 0),
    ("It snowed all night. The roads were white.", ["The kids went swimming outside.", "The kids built a snowman."], 1),
    ("Ana baked bread. The kitchen smelled warm.", ["She shared it with friends.", "She painted it bright blue."], 0),
]
CHOICES = [
    ("中国的首都是", ["北京。", "上海。", "广州。", "深圳。"], 0),
    ("水在标准大气压下的沸点是", ["五十度。", "一百度。", "两百度。", "零度。"], 1),
    ("一年有", ["十个月。", "十一个月。", "十二个月。", "十三个月。"], 2),
    ("三角形有", ["两条边。", "四条边。", "五条边。", "三条边。"], 3),
]
CHOICE_TASK = TaskConfig(
    name="mc-zh",
    version=2,
    language="zh",
    source={"loader": "jsonl", "path": "unused.jsonl"},
    templates={"text_context": "{context}{continuation}", "speech_context": "下面是一段语音和文本交错的内容：<audio>{continuation}"},
    scoring="pairwise_ties_right",
    voices=["voice-a"],
)


def wav_bytes(seed: int, duration_s: float = 0.3) -> bytes:
    return tone_wav(seed, duration_s)


def _clip(store: ClipStore, item: Item, role: Role, voice: str, seed: int) -> tuple[Clip, ClipCheck]:
    stored = store.put_wav(stable_hash([item.id, voice, role]), wav_bytes(seed), {"test": "tone"})
    clip = Clip(key=stored.key, item_id=item.id, role=role, text=role.text_of(item), normalized_text=role.text_of(item),
                voice=voice, engine="tone", model_version="1", seed=0, audio_sha256=stored.audio_sha256,
                path=stored.path, sample_rate_hz=SAMPLE_RATE_HZ, duration_s=stored.duration_s)  # fmt: skip
    check = ClipCheck(item_id=item.id, role=role, attempt=1, clip_key=clip.key, voice=voice, seed=0, asr_model="test",
                      metric="wer", reference="", hypothesis="", transcript=clip.text, error_rate=0.0, passed=True,
                      status="passed")  # fmt: skip
    return clip, check


def make_build(out: Path, tone_offset: int = 0) -> Path:
    """A build directory: items, manifests, the dataset (the stories in a config per voice, the choices in one),
    build_report.json. Another
    ``tone_offset`` gives the same items with other audio (another build of the same texts)."""
    build, store = BuildDir(out), ClipStore(out.parent / f"{out.name}-clips")
    rows_by_task, reports, checks, items_by_id = {}, {}, [], {}
    for task, language, raw, voices, speak in [
        ("demo-stories-en", "en", STORIES, STORY_VOICES, True),
        ("mc-zh", "zh", CHOICES, ("voice-a",), False),
    ]:
        items = [Item(id=f"{task}-{n:03d}", task=task, language=language, context=context, candidates=candidates,
                      right=right, source=Source(file=f"{task}.jsonl", row=n))
                 for n, (context, candidates, right) in enumerate(raw, 1)]  # fmt: skip
        build.write_items(LoadResult(task, items, [], len(items), {"construction": "source", "handled": {}, "rejected": {}}))
        items_by_id.update((item.id, item) for item in items)
        rows, seed = [], 0
        for voice in voices:
            for item in items:
                roles = [Role.context()] + ([Role.of_candidate(k) for k in range(len(item.candidates))] if speak else [])
                made = {}
                for role in roles:
                    seed += 1
                    made[role] = _clip(store, item, role, voice, tone_offset + (seed if role.is_context else 100 + seed))
                checks.extend(check for _, check in made.values())
                rows.append(BuildRow(id=BuildRow.make_id(item.id, voice), item=item, voice=voice,
                                     clips={r: c for r, (c, _) in made.items()}, checks={r: k for r, (_, k) in made.items()}))
        rows_by_task[task] = rows
        # the stories' dataset has a config per voice (task file `config_per_voice: true`), the choices' one config
        config = load_task(task).model_copy(update={"voices": list(voices), "speak": ["context", "candidates"],
                                                     "config_per_voice": True}) if speak else None  # fmt: skip
        reports[task] = task_report(config=config, language=language, version=2 if task == "mc-zh" else 1, voices=list(voices),
                                    load=None, items=items, pairs_in=len(rows), load_drops=[], rows=rows, drops=[])
    finish_build(build, reports, rows_by_task, checks, [], items_by_id, store, Integrity(clips_checked=len(checks)), {})
    return out


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory) -> Path:
    return make_build(tmp_path_factory.mktemp("build") / "b")


def _describe(value: str | Audio) -> str:
    if isinstance(value, Audio):
        return f"audio:{len(value.samples)}:{float(np.round(np.abs(value.samples).sum(), 2))}"
    return value


class ToyAdapter(ModelAdapter):
    """Deterministic scores from a hash of the request: per-token losses in {0.25, 0.5, ..., 1.75}, so ties occur.

    It stands for the model's answers (generated input), not for any stage of s2sbench."""

    name = "toy"
    kind = "generated scores"

    def __init__(self, seed: int = 0, modes: frozenset[str] = frozenset({"T->T", "S->T", "S->S", "T->S"})):
        self.seed = seed
        self.modes = modes
        self.requests: list[Request] = []

    @property
    def model_id(self) -> str:
        return f"toy@{self.seed}"

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        self.requests.extend(requests)
        out = []
        for request in requests:
            digest = stable_hash([self.seed, _describe(request.context), request.context_prefix,
                                  _describe(request.continuation)])  # fmt: skip
            if isinstance(request.continuation, Audio):
                n_tokens = max(1, len(request.continuation.samples) // 1600)
            else:
                n_tokens = max(1, len(request.continuation.split()))
            out.append(LogLikelihood(sum_logprob=-(int(digest[:8], 16) % 7 + 1) * n_tokens / 4, n_tokens=n_tokens))
        return out


@pytest.fixture
def toy_adapter() -> ToyAdapter:
    return ToyAdapter()


@pytest.fixture
def eval_tasks() -> dict[str, TaskConfig]:
    return {"mc-zh": CHOICE_TASK}


@pytest.fixture(scope="session")
def gpt2_checkpoints(tmp_path_factory) -> Path:
    """Three random-weight GPT2 checkpoints (2 layers, width 32, different seeds) saved as ckpt_100/200/300."""
    root = tmp_path_factory.mktemp("run")
    for step, seed in ((300, 3), (100, 1), (200, 2)):
        save_tiny_gpt2(root / f"ckpt_{step}", seed)
    return root


@pytest.fixture(scope="session")
def tiny_moshi_dir(tmp_path_factory) -> Path:
    """A random-weight Moshi (temporal 2 x 32, depth 1 x 16) over a tiny Mimi (8 codebooks of 64 random codes), with
    the byte tokenizer: a real speech LLM that scores T->T, S->T and S->S."""
    import torch
    from transformers import MimiConfig, MoshiConfig, MoshiForConditionalGeneration

    path = tmp_path_factory.mktemp("tiny-moshi")
    tokenizer = byte_tokenizer()
    mimi = MimiConfig(hidden_size=32, num_filters=4, codebook_size=64, codebook_dim=16, num_quantizers=8,
                      vector_quantization_hidden_dimension=16, upsample_groups=32, num_hidden_layers=1,
                      intermediate_size=64, num_attention_heads=2, num_key_value_heads=2, sliding_window=50)  # fmt: skip
    config = MoshiConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         ffn_dim=64, num_codebooks=8, max_position_embeddings=512, audio_encoder_config=mimi.to_dict(),
                         depth_decoder_config={"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                                               "ffn_dim": 32, "sliding_window": 8})  # fmt: skip
    torch.manual_seed(0)
    model = MoshiForConditionalGeneration(config)
    for module in model.audio_encoder.modules():
        if hasattr(module, "embed_sum"):  # random codebooks, so different clips get different codes
            module.embed_sum.normal_()
            module._embed = None
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
