"""Helpers shared by the report tests and their fixtures: the two task configs and a toy adapter whose scores are
generated input (what a model would answer), not a stage of s2sbench under test."""

from __future__ import annotations

from s2sbench.evaluation.models.base import Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.evaluation.run import EvalOptions
from s2sbench.evaluation.stats import BootstrapOptions
from s2sbench.pipeline.manifest import stable_hash
from s2sbench.pipeline.tasks import TaskConfig

STORIES = TaskConfig(
    name="stories-en", language="en", source={"loader": "jsonl", "path": "unused.jsonl"},
    voices=["piper-en-joe", "espeak-en-us"], gate={"metric": "wer", "max_error_rate": 0.15},
)  # fmt: skip
CHOICES = TaskConfig(
    name="choices-zh", version=2, language="zh", source={"loader": "jsonl", "path": "unused.jsonl"},
    templates={"text_context": "{context}{continuation}", "speech_context": "下面是一段语音和文本交错的内容：<audio>{continuation}"},
    scoring="pairwise_ties_right", voices=["espeak-zh-pinyin"], gate={"metric": "cer", "max_error_rate": 0.2},
)  # fmt: skip


class ToyAdapter(ModelAdapter):
    """Losses from a hash of the request (and the seed): generated answers of a model that scores T->T and S->T."""

    name = "toy"
    kind = "generated scores"
    modes = frozenset({"T->T", "S->T"})

    def __init__(self, seed: int = 0):
        self.seed = seed

    @property
    def model_id(self) -> str:
        return f"toy@{self.seed}"

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        out = []
        for request in requests:
            context = request.context
            if isinstance(context, Audio):
                context = f"audio{len(context.samples)}"
            digest = stable_hash([self.seed, context, request.continuation])
            n_tokens = max(1, len(str(request.continuation).split()))
            out.append(LogLikelihood(sum_logprob=-(int(digest[:8], 16) % 9 + 1) * n_tokens / 4, n_tokens=n_tokens))
        return out


def eval_options(**extra) -> EvalOptions:
    tasks = {STORIES.name: STORIES, CHOICES.name: CHOICES}
    return EvalOptions(tasks=tasks, bootstrap=BootstrapOptions(n_resamples=200), **extra)
