"""The speak stage: every text of an item, in one voice, synthesized and verified, retried, or the item dropped.

For one (item, voice) the stage synthesizes each role (context, candidate:K), verifies the clips as one batch, and
re-synthesizes only the failing ones as the gate's attempt policy says (:mod:`s2sbench.pipeline.gate.attempts`:
the next seed, another reading, up to ``gate.max_attempts`` tries, then keeping a clip on the reference's
likelihood). If any clip fails for good the whole item is dropped in that voice, so right and wrong candidates stay
balanced. Every attempt is returned as a :class:`ClipCheck`, so the audit accounts for every clip ever synthesized.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from s2sbench.pipeline.gate.asr.base import TranscriptionError
from s2sbench.pipeline.gate.attempts import KEPT_STATUSES, AttemptPolicy
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.machine.costs import Meter, RowCost
from s2sbench.pipeline.core.records import BuildRow, Clip, ClipCheck, Item, Reason, Role
from s2sbench.pipeline.speech.synthesize import Synthesizer
from s2sbench.pipeline.items.load import spoken_chars, texts_to_speak
from s2sbench.pipeline.items.task_config import Retry, TaskConfig
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.speech.tts.base import SynthesisError, Voice
from s2sbench.pipeline.gate.verify import Verifier

@dataclass
class SpeakOutcome:
    """What happened to one (item, voice): the kept row, or the reason it was dropped, and every attempt."""

    item_id: str
    voice: str
    row: BuildRow | None
    checks: list[ClipCheck] = field(default_factory=list)
    dropped_reason: Reason | None = None
    cost: RowCost | None = None

    @property
    def id(self) -> str:
        return BuildRow.make_id(self.item_id, self.voice)


def _failed_check(
    item: Item, role: Role, voice: Voice, seed: int, attempt: int, reason: Reason, asr_model: str, clip_key: str = "",
    reading: Retry | None = None,
) -> ClipCheck:
    return ClipCheck(
        item_id=item.id, role=role, attempt=attempt, clip_key=clip_key, voice=voice.id, seed=seed,
        **(reading or Retry()).model_dump(),
        asr_model=asr_model,
        metric="none", reference="", hypothesis="", transcript="", error_rate=None, passed=False,
        status="rejected", reasons=(reason,),
    )


def read_as(voice: Voice, wanted: Retry) -> tuple[Voice, Retry]:
    """``voice`` reading as ``wanted`` says, as far as its engine can: the voice, and the :class:`Retry` it did."""
    engine = get_engine(voice.engine)
    done = Retry()
    if wanted.reading == "alternate" and (alternate := engine.alternate_reading(voice)) is not None:
        voice, done = alternate, done.model_copy(update={"reading": "alternate"})
    if wanted.rate != 1.0 and (changed := engine.at_rate(voice, wanted.rate)) is not None:
        voice, done = changed, done.model_copy(update={"rate": wanted.rate})
    return voice, done


class Speaker:
    """Speaks and verifies items for one task; reuse one instance for many items (engines stay loaded)."""

    def __init__(self, task: TaskConfig, synthesizer: Synthesizer, verifier: Verifier, store: ClipStore, base_seed: int = 0):
        self.task = task
        self.synthesizer = synthesizer
        self.verifier = verifier
        self.store = store
        self.policy = AttemptPolicy(task.gate, base_seed)

    def _asr_name(self) -> str:
        asr = self.verifier.asr
        return asr.model_id if asr is not None else "none"

    def attempt_voice(self, voice: Voice, attempt: int) -> tuple[Voice, Retry]:
        """The voice an attempt speaks with and how it reads: the reading the attempt policy wants, as far as the
        engine can (the returned :class:`Retry` is what it did)."""
        return read_as(voice, self.policy.reading(attempt))

    def speak(self, item: Item, voice: Voice) -> SpeakOutcome:
        outcome = SpeakOutcome(item_id=item.id, voice=voice.id, row=None)
        texts = texts_to_speak(item, self.task)
        pending = dict(texts)
        accepted: dict[Role, tuple[Clip, ClipCheck]] = {}
        last_check: dict[Role, ClipCheck] = {}
        made_for: dict[str, Clip] = {}  # check id -> the clip it checked
        synthesis, gate, retries = Meter(), Meter(), Meter()
        cached = audio_bytes = retried = 0
        unspeakable: Role | None = None  # a role the voice can never say: no attempt after it
        for attempt in self.policy.attempts():
            seed = self.policy.seed(attempt)
            spoken_by, reading = self.attempt_voice(voice, attempt)
            first = attempt == 1
            calls, hits = self.synthesizer.calls, self.synthesizer.cache_hits
            made: list[Clip] = []
            with (synthesis if first else retries).span():
                for role, text in pending.items():
                    try:
                        made.append(self.synthesizer.make_clip(item.id, role, text, spoken_by, seed))
                    except SynthesisError as error:
                        reason = Reason(code="synthesis_failed", detail=str(error))
                        check = _failed_check(item, role, voice, seed, attempt, reason, self._asr_name(), reading=reading)
                        outcome.checks.append(check)
                        last_check[role] = check
                        if not error.retryable:  # the text is the cause: every attempt would fail alike
                            unspeakable = role
                            break
            if first:
                synthesis.clips += self.synthesizer.calls - calls
                cached = self.synthesizer.cache_hits - hits
                audio_bytes = sum(self.store.abspath(clip.path).stat().st_size for clip in made)
            else:
                retries.clips += len(pending)
            if unspeakable is not None:
                break
            with (gate if first else retries).span(clips=len(made) if first else 0):
                checks = [check.model_copy(update=reading.model_dump()) for check in self._verify(item, made, voice, seed, attempt)]
            outcome.checks.extend(checks)
            for clip, check in zip(made, checks):
                made_for[check.id] = clip
                if check.status in KEPT_STATUSES:
                    accepted[clip.role] = (clip, check)
                    del pending[clip.role]
                else:
                    last_check[clip.role] = check
            if first and not self.policy.is_last(attempt):
                retried = len(pending)
            if pending and self.policy.asks_margin_after(attempt):
                with retries.span():
                    audio_of = {check_id: (lambda clip=clip: self._load(clip)) for check_id, clip in made_for.items()}
                    for role, index in self.policy.keep_on_reference(outcome.checks, list(pending), self.verifier,
                                                                     audio_of).items():
                        passed = outcome.checks[index]
                        accepted[role] = (made_for[passed.id], passed)
                        del pending[role]
            if not pending:
                break
        outcome.cost = RowCost(
            id=outcome.id, task=self.task.name, voice=voice.id, asr_model=self._asr_name(), clips=len(texts),
            chars=spoken_chars(item, self.task), cached=cached, retried_clips=retried, audio_bytes=audio_bytes,
            synthesis=synthesis.spent(), gate=gate.spent(), retries=retries.spent(),
        )  # fmt: skip
        if pending:
            role = unspeakable or next(iter(pending))
            failed = last_check[role]
            tried = [check for check in outcome.checks if check.role == role]
            heard = ", ".join(f"seed {check.seed} at {Retry(rate=check.rate, reading=check.reading).describe()}: "
                              + (f"{check.metric} {check.error_rate:.2f}" if check.error_rate is not None else check.status)
                              + (f", reference {check.reference_margin:+.1f} nats" if check.reference_margin is not None else "")
                              for check in tried)
            # counted by what failed the clip (error_rate, synthesis_failed, ...), not by which clip it was
            outcome.dropped_reason = Reason(
                code=failed.reasons[0].code if failed.reasons else "rejected",
                detail=f"{role} failed {len(tried)} attempt(s) ({heard}); the last: {failed.reason}",
            )
            return outcome
        outcome.row = BuildRow(
            id=BuildRow.make_id(item.id, voice.id),
            item=item,
            voice=voice.id,
            clips={role: accepted[role][0] for role in texts},
            checks={role: accepted[role][1] for role in texts},
        )
        return outcome

    def _load(self, clip: Clip) -> np.ndarray:
        return self.store.load(clip.path, f"clip {clip.item_id} {clip.role} ({clip.voice})")

    def _verify(self, item: Item, clips: Sequence[Clip], voice: Voice, seed: int, attempt: int) -> list[ClipCheck]:
        if not clips:
            return []
        audios = [self._load(clip) for clip in clips]
        try:
            return self.verifier.check_batch(clips, audios, attempt)
        except TranscriptionError as error:
            reason = Reason(code="transcription_failed", detail=str(error))
            return [_failed_check(item, clip.role, voice, seed, attempt, reason, self._asr_name(), clip.key) for clip in clips]
