"""The gate's policy over the attempts of one clip: which seed and reading each attempt uses, and, when every
attempt failed, which one is kept on the reference's likelihood.

The first attempt reads the text as the voice does; each retry takes the next of ``gate.retries`` (cycled) with the
next seed. What a reading means for a voice (a rate, the engine's other front end) is the speech layer's to apply;
the policy only says which is wanted. When a clip's every attempt failed and the gate keeps clips on the reference
(``gate.reference_margin_nats``), its attempts are asked for their margin best heard first, and the first the judge
finds close enough to its reference is kept; a row is kept that way only if every failed clip of it is. That is asked
after the last attempt, or after each from ``gate.reference_keep_after`` on, which then ends the row's attempts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import numpy as np

from s2sbench.pipeline.core.records import ClipCheck
from s2sbench.pipeline.gate.verify import Verifier, asks_margin
from s2sbench.pipeline.items.task_config import GateConfig, Retry

#: statuses of a check whose clip is kept
KEPT_STATUSES = ("passed", "unverified")


class AttemptPolicy:
    """Attempts for one task's gate; ``base_seed`` is the first attempt's seed."""

    def __init__(self, gate: GateConfig, base_seed: int = 0):
        self.gate = gate
        self.base_seed = base_seed

    def attempts(self) -> Iterator[int]:
        """Attempt numbers, from 1 to ``gate.max_attempts``."""
        return iter(range(1, self.gate.max_attempts + 1))

    def is_last(self, attempt: int) -> bool:
        return attempt >= self.gate.max_attempts

    def seed(self, attempt: int) -> int:
        return self.base_seed + attempt - 1

    def reading(self, attempt: int) -> Retry:
        """How ``attempt`` should read: the voice's own reading first, then ``gate.retries`` in turn."""
        if attempt == 1:
            return Retry()
        retries = self.gate.retries
        return retries[(attempt - 2) % len(retries)]

    @property
    def keeps_on_reference(self) -> bool:
        return self.gate.reference_margin_nats is not None

    def asks_margin_after(self, attempt: int) -> bool:
        """Whether a clip that failed ``attempt`` (and every attempt before) is asked for its reference margin now,
        and kept on it without the attempts left: after the last attempt, or from ``gate.reference_keep_after`` on."""
        after = self.gate.reference_keep_after
        return self.keeps_on_reference and (self.is_last(attempt) or (after is not None and attempt >= after))

    def keep_on_reference(
        self, checks: list[ClipCheck], pending: Sequence[str], verifier: Verifier,
        audio_of: Mapping[str, Callable[[], np.ndarray]],
    ) -> dict[str, int]:
        """Role -> index in ``checks`` of the attempt kept on the reference, for every role in ``pending``, or {} when
        one of them has no attempt close enough (the row is then dropped). ``audio_of`` maps a check's id to what
        loads the clip it checked. ``checks`` is updated in place: each attempt asked gets its margin, each kept
        attempt its passing verdict."""
        kept: dict[str, tuple[int, ClipCheck]] = {}
        for role in pending:
            tried = sorted((index for index, check in enumerate(checks)
                            if check.role == role and check.error_rate is not None and check.id in audio_of),
                           key=lambda index: checks[index].error_rate)  # fmt: skip
            for index in tried:
                if asks_margin(self.gate, checks[index]):  # the clip is loaded only for a margin not asked yet
                    checks[index] = verifier.with_margin(checks[index], audio_of[checks[index].id]())
                if (passed := verifier.on_reference(checks[index])) is not None:
                    kept[role] = (index, passed)
                    break
            else:
                return {}
        for index, passed in kept.values():
            checks[index] = passed
        return {role: index for role, (index, _) in kept.items()}
