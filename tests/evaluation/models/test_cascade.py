from __future__ import annotations

import numpy as np
import pytest

from s2sbench.evaluation.models import AdapterError, Request, get_adapter


@pytest.fixture(scope="module")
def cascade(tiny_gpt2_dir):
    return get_adapter("cascade", asr_engine="faster-whisper", asr_model="tiny.en",
                       asr_options={"device": "cpu", "compute_type": "int8"}, lm="hf-causal", model=str(tiny_gpt2_dir),
                       licence="Apache-2.0")


def test_cascade_scores_the_transcript_like_a_text_request(cascade, spoken_contexts):
    calls = []
    transcribe = cascade.asr.transcribe

    def counting(clips, language):
        calls.append(len(clips))
        return transcribe(clips, language)

    cascade.asr.transcribe = counting
    endings = [" She disliked her roommate.", " They went to a music show together."]
    requests = [Request(context=audio, continuation=ending.strip(), group=f"g{i}",
                        context_prefix="Below is a segment of alternating speech and text content: ", language="en")
                for i, audio in enumerate(spoken_contexts) for ending in endings]
    spoken = cascade.loglikelihood(requests)
    assert calls == [2]  # two distinct audios, four requests, one ASR call
    cascade.loglikelihood(requests)
    assert calls == [2]  # cached across calls

    transcripts = list(cascade.transcribe(requests).values())
    assert transcripts[0].lower().startswith("karen was assigned a roommate")
    text_requests = [Request(context=transcripts[i], continuation=ending, group=f"t{i}")
                     for i in range(2) for ending in endings]
    expected = cascade.lm.loglikelihood(text_requests)
    np.testing.assert_allclose([r.sum_logprob for r in spoken], [r.sum_logprob for r in expected], atol=1e-5)
    assert all(r.sum_logprob < 0 for r in spoken)


def test_cascade_declares_the_asr_languages(cascade, spoken_contexts):
    assert cascade.kind == "cascade baseline"
    assert cascade.licence == "LM: Apache-2.0"  # recorded with its results
    assert cascade.speech_languages == frozenset({"en"})
    assert cascade.supports("S->T", "zh")[0] is False
    assert cascade.supports("S->T", "en")[0] is True
    with pytest.raises(AdapterError, match="spoken continuation"):
        cascade.loglikelihood([Request(context="x", continuation=spoken_contexts[0], group="g")])


def test_the_cascade_takes_the_gates_transcript_of_a_build_and_scores_the_same(real_build, cascade, tmp_path):
    """On a build folder the cascade does not transcribe again what the gate heard with the same ASR model (tiny.en,
    int8): it takes the audit's transcript, and its S->T scores equal those of the same data read as a saved dataset
    folder, where it transcribes every clip itself."""
    from s2sbench.evaluation.runner.run import EvalOptions, evaluate
    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    from tests.real_build import STORY_TASK

    calls = []
    transcribe = cascade.asr.transcribe

    def counting(clips, language):
        calls.append(len(clips))
        return transcribe(clips, language)

    cascade.asr.transcribe = counting
    cascade._transcripts.clear()
    options = EvalOptions(select_tasks=(STORY_TASK,), tasks=None)
    from_build = evaluate(real_build.root, cascade, ["S->T"], tmp_path / "build", options)
    assert calls == [] and cascade.transcripts_reused == 4  # 2 stories x 2 voices, each context heard by the gate
    cascade._transcripts.clear()
    from_folder = evaluate(BuildDir(real_build.root).dataset_dir / STORY_TASK, cascade, ["S->T"], tmp_path / "folder",
                           EvalOptions(tasks={STORY_TASK: BuildDir(real_build.root).read_report().task_config(STORY_TASK)}))
    assert sum(calls) == 4 and cascade.transcripts_reused == 4
    assert _scores(from_build.out_dir) == _scores(from_folder.out_dir) and len(_scores(from_build.out_dir)) == 8
    assert from_build.file.model.device == "cpu"


def test_the_cascade_says_where_each_part_runs(fake_gpu, tiny_gpt2_dir):
    on_gpu = get_adapter("cascade", asr_model="tiny.en", lm="hf-causal", model=str(tiny_gpt2_dir))
    assert fake_gpu == [("cuda", "float16")]  # --device unset: auto finds the (faked) GPU
    assert on_gpu.runs_on() == "ASR cuda, LM cpu"  # this torch has no CUDA, so the LM stays on the CPU


def _scores(out_dir) -> list:
    import json

    lines = (out_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return sorted((row["item_id"], row["voice"], row["candidate"], row["sum_logprob"]) for row in map(json.loads, lines))
