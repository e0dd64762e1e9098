"""What a task file that says little gets: the judge of its language."""

import pytest


@pytest.mark.parametrize("language, gate, judge", [
    ("ja", None, "base"),  # a new user's Japanese file without a gate: heard, not left unverified by tiny.en
    ("zh", {"max_attempts": 3}, "base"),
    ("en", None, "tiny.en"),
    ("ja", {"asr": {"model": "tiny.en"}}, "tiny.en"),  # a judge named is kept (the build warns it cannot hear ja)
])
def test_a_task_that_names_no_judge_gets_the_offline_whisper_of_its_language(make_task, language, gate, judge):
    fields = {"language": language, "voices": ["kokoro-ja-alpha"], "source": {"loader": "jsonl", "path": "x.jsonl"}}
    task = make_task(**fields, **({"gate": gate} if gate else {}))
    assert task.gate.asr.model == judge and task.gate.asr.engine == "faster-whisper"
