"""A clip the judge mishears on every attempt, kept on the reference's likelihood, with real TTS and real Whisper: a
rare name heard as another word is kept (on the attempt heard best), a sentence the voice did not say is not, and the
audit, its summary and a re-check tell which clips were kept that way."""

import pytest

from s2sbench.pipeline.core.records import Role
from s2sbench.pipeline.items.task_config import GateConfig, SourceConfig, TaskConfig
from s2sbench.pipeline.gate.verify import Verifier, final_checks, summarize_checks

from tests.gate.test_speak_gate import MisreadingSynthesizer

TASK = "reference-margin-test"
# tiny.en hears the place name as "Etsilanti" (one word of six), but finds the reference about 12 nats less likely
# than its own transcript; the planted sentence is more than 30 nats off
RARE = "Kaitlyn fed the axolotl in Ypsilanti."
GATE = GateConfig(max_error_rate=0.1, max_attempts=2, reference_margin_nats=20)


@pytest.fixture(scope="module")
def run(store, piper_voice, fw_asr, make_item):
    from s2sbench.pipeline.speech.speak import Speaker

    task = TaskConfig(name=TASK, language="en", source=SourceConfig(loader="jsonl", path="unused.jsonl"),
                      voices=["piper-en-joe"], speak=["context"], gate=GATE)
    verifier = Verifier(fw_asr, task.gate, task.language)
    speaker = Speaker(task, MisreadingSynthesizer(store, item_id="planted", role="context"), verifier, store)
    items = {name: make_item(name, RARE, ["It swam away.", "It flew away."], task=TASK) for name in ("rare", "planted")}
    return {"items": items, "verifier": verifier,
            "outcomes": {name: speaker.speak(item, piper_voice) for name, item in items.items()}}


def test_a_rare_word_the_judge_mishears_is_kept_on_the_reference(run):
    rare = run["outcomes"]["rare"]
    assert rare.row is not None
    kept = rare.row.checks[Role.context()]
    attempts = [check for check in rare.checks if check.role == "context"]
    assert len(attempts) == 2 and all(check.error_rate > GATE.max_error_rate for check in attempts)
    assert kept.kept_on_reference and kept.status == "passed" and kept.passed and kept.reasons == ()
    assert -GATE.reference_margin_nats <= kept.reference_margin < 0
    assert kept.error_rate == min(check.error_rate for check in attempts)  # the attempt heard best
    assert kept in rare.checks  # the audit holds the kept verdict, not the rejection it replaced


def test_a_sentence_the_voice_did_not_say_is_not_kept(run):
    planted = run["outcomes"]["planted"]
    assert planted.row is None
    margins = [check.reference_margin for check in planted.checks]
    assert len(margins) == 2 and all(margin < -GATE.reference_margin_nats for margin in margins), margins
    assert "reference -" in planted.dropped_reason.detail and " nats" in planted.dropped_reason.detail
    assert not any(check.kept_on_reference for check in planted.checks)


def test_the_summary_and_a_recheck_count_clips_kept_on_the_reference(run, store):
    checks = [check for outcome in run["outcomes"].values() for check in outcome.checks]
    decided = {check.item_id: check for check in final_checks(checks)}
    assert decided["rare"].kept_on_reference and decided["planted"].status == "rejected"
    summary = summarize_checks(checks, run["items"])
    assert summary["overall"]["kept_on_reference"] == 1
    assert summary["overall"]["final_status"] == {"passed": 1, "rejected": 1}
    # a re-check (one attempt per clip) keeps the clip the same way, and never a clip the gate without it rejects
    verifier = run["verifier"]
    kept = run["outcomes"]["rare"].row.clips[Role.context()]
    again = verifier.check_batch([kept], [store.load(kept.path)], attempt=1)[0]
    assert again.status == "rejected" and again.reference_margin is None  # margins cost a pass: asked for, not given
    assert verifier.on_reference(verifier.with_margin(again, store.load(kept.path))).kept_on_reference
    strict = Verifier(verifier.asr, GATE.model_copy(update={"reference_margin_nats": None}), "en")
    assert strict.on_reference(verifier.with_margin(again, store.load(kept.path))) is None


def test_a_clip_kept_on_the_reference_early_ends_its_attempts(store, piper_voice, fw_asr, make_item):
    """``reference_keep_after: 1``: the rare name is kept on its first attempt's margin, without the two attempts
    left; the sentence the voice did not say is asked after every attempt and still dropped after all three."""
    from s2sbench.pipeline.speech.speak import Speaker

    gate = GATE.model_copy(update={"max_attempts": 3, "reference_keep_after": 1})
    task = TaskConfig(name=TASK, language="en", source=SourceConfig(loader="jsonl", path="unused.jsonl"),
                      voices=["piper-en-joe"], speak=["context"], gate=gate)
    speaker = Speaker(task, MisreadingSynthesizer(store, item_id="planted", role="context"),
                      Verifier(fw_asr, gate, task.language), store)
    rare = speaker.speak(make_item("rare", RARE, ["It swam away.", "It flew away."], task=TASK), piper_voice)
    assert [check.attempt for check in rare.checks] == [1]
    assert rare.row is not None and rare.row.checks[Role.context()].kept_on_reference
    planted = speaker.speak(make_item("planted", RARE, ["It swam away.", "It flew away."], task=TASK), piper_voice)
    assert planted.row is None and [check.attempt for check in planted.checks] == [1, 2, 3]
    assert all(check.reference_margin < -gate.reference_margin_nats for check in planted.checks)


@pytest.mark.parametrize("update, message", [({"reference_margin_nats": None}, "set reference_margin_nats too"),
                                             ({"reference_keep_after": 3}, "past max_attempts")])
def test_reference_keep_after_is_checked(update, message):
    with pytest.raises(ValueError, match=message):
        GateConfig(**{**GATE.model_dump(), "reference_keep_after": 1, **update})
