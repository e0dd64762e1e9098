"""Backends that are busy for as long as it takes, for the interrupt cases: each one, once called, writes the file
``$S2SBENCH_TEST_BUSY`` (so the test knows the command is inside it) and then computes inside one long C call that
releases the GIL and does not return for a signal, as a model's forward pass does (a BLAS matrix product).

Run as ``python -m tests.badinput.slow_backends ARGV...``: the s2sbench command line (as the console script runs
it) with the model ``slow-lm`` and the ASR engine ``slow-asr`` added to their registries.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from s2sbench.evaluation.models import ADAPTERS
from s2sbench.evaluation.models.base import ModelAdapter
from s2sbench.pipeline.gate.asr import ASR_ENGINES, ASREngine

SIDE = 6000  # a 6000 x 6000 float32 product: hundreds of GFLOP, far longer than any grace period here


def busy() -> None:
    Path(os.environ["S2SBENCH_TEST_BUSY"]).write_text(str(os.getpid()))
    matrix = np.ones((SIDE, SIDE), dtype=np.float32)
    while True:  # each product is one C call; the loop only matters if a machine does one within the grace period
        matrix = matrix @ matrix


class SlowLM(ModelAdapter):
    name = "slow-lm"

    @property
    def model_id(self) -> str:
        return "slow-lm"

    def _loglikelihood(self, requests):
        busy()


class SlowASR(ASREngine):
    name = "slow-asr"
    model_id = "slow-asr"

    def __init__(self, model: str, **options):
        pass

    def languages(self):
        return None

    def transcribe(self, clips, language):
        busy()


if __name__ == "__main__":
    from s2sbench.flows.cli import main

    ADAPTERS.register("slow-lm", SlowLM)
    ASR_ENGINES.register("slow-asr", SlowASR)
    sys.exit(main(sys.argv[1:], hard_exit=True))
