"""The dataset card: a valid Hub YAML header and prose whose numbers are the build's."""

from __future__ import annotations

import re

import yaml

from s2sbench.pipeline.publish.card import describe_build, size_category
from s2sbench.pipeline.publish.hub import stage_repo


def _card(build_dir, tmp_path, **kwargs) -> tuple[dict, str]:
    staged = stage_repo(build_dir, tmp_path / "stage", "org/demo", **kwargs)
    text = (staged.folder / "README.md").read_text(encoding="utf-8")
    header, body = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S).groups()
    return yaml.safe_load(header), body


def test_yaml_header_declares_configs_features_and_counts(build_dir, tmp_path):
    header, _ = _card(build_dir, tmp_path)
    configs = {c["config_name"]: c for c in header["configs"]}
    assert configs["demo-choice-zh"]["data_files"] == [{"split": "test", "path": "demo-choice-zh/test-*.parquet"}]
    assert sum(c.get("default", False) for c in configs.values()) == 1
    infos = {info["config_name"]: info for info in header["dataset_info"]}
    assert {name: info["splits"][0]["num_examples"] for name, info in infos.items()} == {
        "demo-choice-zh": 2, "demo-stories-en--espeak-en-us": 2, "demo-stories-en--piper-en-joe": 3}
    features = {f["name"]: f for f in infos["demo-choice-zh"]["features"]}
    assert features["context_audio"]["dtype"] == {"audio": {"sampling_rate": 16000}}
    assert {"candidates", "label", "voice", "context_error_rate", "verification_status"} <= set(features)
    assert header["language"] == ["en", "zh"]
    # sources with different licences (Apache-2.0 demo, CC BY-NC CMMLU) make the set 'other'
    assert header["license"] == "other"
    assert header["size_categories"] == ["n<1K"] and "multiple-choice" in header["task_categories"]


def test_body_reports_sources_voices_gate_and_drop_counts(build_dir, tmp_path):
    _, body = _card(build_dir, tmp_path)
    assert "| `demo-stories-en--piper-en-joe` | demo-stories-en | piper-en-joe | test | 3 |" in body
    assert "Total rows: 7." in body
    assert "CC BY-NC 4.0" in body and "Demo items written for s2sbench" in body
    assert "| piper-en-joe | piper | piper-en-joe-model | MIT (fixture) |" in body
    # demo-stories-en's gate comes from the task registry, demo-choice-zh's from the report
    assert "faster-whisper `tiny.en` transcribes every clip; a clip passes when its WER is at most 0.15" in body
    assert "faster-whisper `small` transcribes every clip; a clip passes when its CER is at most 0.2, with up to 3" in body
    assert "Attempts checked: 21; rejected: 2; unverified: 0." in body
    assert "Text normalization: numbers and symbols spelled out; NFKC. In this build 15 of 17 clip texts were changed" in body
    assert "- demo-stories-en: 1 at `gate` (e.g. gate: context failed 2 attempts)" in body
    assert 'load_dataset("org/demo", "demo-choice-zh", split="test")' in body
    assert 'DatasetDict({"demo_choice_zh": ds}).save_to_disk("from-hub/dataset")' in body
    assert "arXiv:2505.14438" in body and "li2023cmmlu" in body


def test_licence_override_and_size_categories(build_dir, tmp_path):
    header, _ = _card(build_dir, tmp_path, licence="cc-by-nc-4.0")
    assert header["license"] == "cc-by-nc-4.0"
    assert [size_category(n) for n in (999, 3742, 12_000)] == ["n<1K", "1K<n<10K", "10K<n<100K"]


def test_description_counts_rows_from_the_manifest(build_dir):
    build = describe_build(build_dir)
    assert dict(build.rows) == {("demo-stories-en", "piper-en-joe"): 3, ("demo-stories-en", "espeak-en-us"): 2,
                                ("demo-choice-zh", "espeak-zh-pinyin"): 2}
    assert build.engines == {"piper": {"piper-1.0"}, "espeak-ng": {"espeak-ng-1.0"}}
