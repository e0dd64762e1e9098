"""A build published to the local Hub is evaluated by its Hub id, as a user elsewhere would evaluate it."""

from __future__ import annotations

import json

import pytest

from tests.factories import save_tiny_gpt2
from tests.real_build import CHOICE_TASK, STORY_TASK
from tests.publish.test_hub import FAST

from s2sbench.evaluation.results.folder import ResultsFile
from s2sbench.flows.cli import main
from s2sbench.pipeline.publish.hub import publish_build


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    return save_tiny_gpt2(tmp_path_factory.mktemp("tiny-gpt2"), seed=1)


def _eval(dataset, out, tiny_lm, *extra) -> int:
    return main(["eval", "--dataset", str(dataset), "--model", "hf-causal", "--model-arg", f"model={tiny_lm}",
                 "--modes", "T->T", "--bootstrap", "200", "--out", str(out), *extra])  # fmt: skip


def test_a_published_build_is_evaluated_by_its_hub_id(build_dir, local_hub, tmp_path, tiny_lm, capsys):
    import datasets
    from huggingface_hub import HfApi

    publish_build(build_dir, "org/evalme", policy=FAST)
    stories = datasets.load_dataset("org/evalme", STORY_TASK, split="test", cache_dir=str(tmp_path / "cache"))
    assert len(stories) == 4 and stories.features["context_audio"].sampling_rate == 16000

    assert _eval("org/evalme", tmp_path / "hub", tiny_lm) == 0
    assert _eval(build_dir, tmp_path / "local", tiny_lm) == 0
    hub, local = (ResultsFile.read(tmp_path / name / "results.json") for name in ("hub", "local"))
    assert (hub.dataset.kind, hub.dataset.location) == ("hub", "org/evalme")
    assert hub.dataset.revision == HfApi().dataset_info("org/evalme").sha  # the commit it was read at
    assert hub.dataset.build_report_sha256 == local.dataset.build_report_sha256  # the repo's build_report.json
    assert hub.tasks == local.tasks  # the same rows, the same scores: a build and its Hub copy read alike
    lm_eval = json.loads((tmp_path / "hub" / "results_lm_eval.json").read_text(encoding="utf-8"))
    assert lm_eval["results"][f"{STORY_TASK}@T-T"]["acc,none"] == hub.tasks[STORY_TASK].accuracy("T->T").value
    assert lm_eval["config"]["dataset"]["location"] == "org/evalme"

    # a revision, and a selection: only the stories' config is downloaded
    publish_build(build_dir, "org/evalme", revision="v2", policy=FAST, verify=False)
    local_hub.requests.clear()
    assert _eval("org/evalme@v2", tmp_path / "v2", tiny_lm, "--tasks", STORY_TASK, "--limit", "1") == 0
    v2 = ResultsFile.read(tmp_path / "v2" / "results.json")
    assert list(v2.tasks) == [STORY_TASK] and v2.tasks[STORY_TASK].n_items == 1
    assert not any(CHOICE_TASK in path for _, path in local_hub.requests)

    capsys.readouterr()
    assert _eval("org/nothing-here", tmp_path / "none", tiny_lm) == 2
    assert "--dataset org/nothing-here@main: RepositoryNotFoundError" in capsys.readouterr().err
