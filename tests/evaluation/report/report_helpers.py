"""Helpers shared by the report tests and their fixtures: a toy adapter whose scores are generated input (what a
model would answer), not a stage of s2sbench under test. The task settings come from the build's report."""

from __future__ import annotations

from s2sbench.evaluation.models.base import Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.evaluation.runner.run import EvalOptions
from s2sbench.evaluation.protocol.stats import BootstrapOptions
from s2sbench.pipeline.core.manifest import stable_hash

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
    return EvalOptions(bootstrap=BootstrapOptions(n_resamples=200), **extra)
