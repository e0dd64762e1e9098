"""``--device auto|cpu|cuda`` with the GPU faked (``fake_gpu``: none is here): how a choice resolves, where each
engine is put, and what the clip keys, the gate's model id and the build report say. Every other test runs the CPU
path, the default."""

from __future__ import annotations

import os

import pytest

import s2sbench.pipeline.machine.device as device
from s2sbench.flows.cli import main
from s2sbench.pipeline.gate.asr.faster_whisper import FasterWhisperASR
from s2sbench.pipeline.machine.device import DEVICE_ENV
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.catalog.voices import get_voice


def test_auto_is_the_gpu_where_there_is_one_and_cuda_without_one_is_a_config_error(fake_gpu, monkeypatch):
    assert device.choose_device("auto") == device.choose_device(None) == "cuda"
    assert device.choose_device("cpu") == "cpu"
    monkeypatch.setattr(device, "cuda_device_count", lambda: 0)
    assert device.choose_device("auto") == "cpu"
    with pytest.raises(ConfigError, match="--device cuda: no CUDA GPU found"):
        device.choose_device("cuda")
    with pytest.raises(ConfigError, match="--device must be one of auto, cpu, cuda, got 'tpu'"):
        device.choose_device("tpu")


def test_the_choice_reaches_the_engines_through_the_environment(fake_gpu, monkeypatch):
    assert device.engine_device() == "cuda"  # unset: auto
    assert device.use_device("cpu") == "cpu" and os.environ[DEVICE_ENV] == "cpu" and device.engine_device() == "cpu"
    monkeypatch.setenv(DEVICE_ENV, "gpu0")
    with pytest.raises(ConfigError, match="S2SBENCH_DEVICE must be cpu or cuda, got 'gpu0'"):
        device.engine_device()


def test_build_with_device_cuda_on_a_machine_without_one_fails_before_it_starts(fake_gpu, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(device, "cuda_device_count", lambda: 0)
    code = main(["build", "demo-stories-en", "--out", str(tmp_path / "b"), "--device", "cuda", "--dry-run"])
    assert code == ConfigError.exit_code
    assert "--device cuda: no CUDA GPU found" in capsys.readouterr().err and not (tmp_path / "b").exists()


def test_the_gate_decodes_in_float16_on_the_gpu_and_says_so_in_its_model_id(fake_gpu, monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    asr = FasterWhisperASR("tiny.en")
    assert fake_gpu == [("cuda", "float16")] and asr.device == "cuda" and asr.workers == 1
    assert asr.model_id.endswith(":float16@cuda")
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    on_cpu = FasterWhisperASR("tiny.en")
    assert fake_gpu[-1] == ("cpu", "int8") and on_cpu.model_id.endswith(":int8")  # the id the CPU always had


def test_onnx_voices_take_the_cuda_provider_and_their_clip_key_names_the_gpu(fake_gpu, monkeypatch, caplog):
    voice, engine = get_voice("piper-en-joe"), get_engine("piper")
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    on_cpu = engine.model_version(voice)
    assert device.onnx_providers("cpu") == ["CPUExecutionProvider"] and "@" not in on_cpu.rsplit(";", 1)[1]
    monkeypatch.setenv(DEVICE_ENV, "cuda")
    assert device.onnx_providers("cuda") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert engine.model_version(voice) == on_cpu + "@cuda"  # GPU clips are other bytes: never served for CPU ones
    monkeypatch.setattr(device, "_onnx_available_providers", lambda: ["CPUExecutionProvider"])  # no onnxruntime-gpu
    assert device.onnx_providers("cuda") == ["CPUExecutionProvider"] and engine.model_version(voice) == on_cpu
    assert device.devices_named([f"piper {on_cpu}", "faster-whisper:tiny.en:float16@cuda"]) == ["cpu", "cuda"]


def test_a_build_report_names_the_device_its_clips_were_made_on(real_build):
    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    assert BuildDir(real_build.root).read_report().devices == ["cpu"]
