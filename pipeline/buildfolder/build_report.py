"""``build_report.json`` as a typed record: what a build was made from, what it kept and dropped, and how.

Written once by assembly (or by an import of the original layout) and read by every consumer (the dataset card,
evaluation, the HTML report, re-verification) through :class:`~s2sbench.pipeline.buildfolder.builddir.BuildDir`, which
validates it and names the field that is wrong.
"""

from __future__ import annotations

from collections import Counter

from typing import Literal

from pydantic import Field

from s2sbench.pipeline.machine.costs import CostTable
from s2sbench.pipeline.core.records import SCHEMA_VERSION, Record
from s2sbench.pipeline.items.sources import LoadReport
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.speech.tts.base import Voice


class Normalization(Record):
    """What s2sbench does to text before synthesis and before the gate compares a transcript with it."""

    before_tts: str
    before_scoring: str
    languages: list[str]

    def describe(self) -> str:
        """One sentence for the dataset card."""
        return (f"before synthesis, {self.before_tts}; before the ASR gate scores a transcript, {self.before_scoring} "
                f"(languages: {', '.join(self.languages) or 'none'})")  # fmt: skip


#: what every build records (pipeline/text/normalize.py, pipeline/gate/verify.py)
NORMALIZATION_STEPS = {
    "before_tts": "numbers, dates, times, currency, abbreviations and symbols are written out as words "
    "(`s2sbench.pipeline.text.normalize.normalize_for_tts`)",
    "before_scoring": "reference and transcript go through Whisper's English normalizer (en) or NFKC, lower case, "
    "punctuation removed and traditional-to-simplified Chinese (CER languages) (`s2sbench.pipeline.gate.verify.normalize`)",
}


class GroupLoss(Record):
    """What the gate cost one group of a task's items (a CMMLU subject): item x voice rows in, kept, dropped and why."""

    items: int
    rows_in: int
    kept: int
    dropped: int
    drop_reasons: dict[str, int]

    @property
    def kept_share(self) -> float:
        return self.kept / self.rows_in if self.rows_in else 1.0


class ConditionSummary(Record):
    """One acoustic condition of a task: its parameters, the clips it made, and how hard it is for the gate's ASR
    (the mean error rate of the context clips against their texts, clean and under the condition: same rows)."""

    parameters: dict
    rows: int
    clips: int
    metric: str
    asr_model: str
    error_rate: float | None  # mean over the context clips under the condition
    clean_error_rate: float | None  # the same rows' clean context clips, as the gate heard them


def mix_distance(shares_in: dict[str, int], shares_out: dict[str, int]) -> float:
    """Total variation distance between two mixes of counts per group: the share of the second set that would have
    to change group to have the first set's mix (0: the same mix; 1: no group in common)."""
    total_in, total_out = sum(shares_in.values()), sum(shares_out.values())
    if not total_in or not total_out:
        return 0.0 if total_in == total_out else 1.0
    groups = set(shares_in) | set(shares_out)
    return sum(abs(shares_in.get(g, 0) / total_in - shares_out.get(g, 0) / total_out) for g in groups) / 2


class TaskReport(Record):
    """One task of a build: its settings (``config``; None for an import, which has no task file) and counts."""

    config: TaskConfig | None
    language: str
    version: int
    voices: list[str]
    items: LoadReport | None  # the loader's report (None for an import)
    source_rows_dropped: int
    items_in: int
    item_voice_pairs_in: int
    kept: int
    dropped: int
    drop_reasons: dict[str, int]  # speak-stage drops by reason code
    clips_kept: int
    clips_unverified: int
    clips_kept_on_reference: int = 0  # misheard on every attempt, kept on the reference's likelihood (gate)
    # by the items' subject (CMMLU): the gate's loss per subject, so a reader sees which part of the test it thinned
    by_subject: dict[str, GroupLoss] = {}
    conditions: dict[str, ConditionSummary] = {}  # by name, in the task file's order

    @property
    def subject_mix_distance(self) -> float | None:
        """How far the kept rows' subject mix is from the text set's (:func:`mix_distance`); None without subjects."""
        if not self.by_subject:
            return None
        return mix_distance({name: group.rows_in for name, group in self.by_subject.items()},
                            {name: group.kept for name, group in self.by_subject.items()})

    def subjects_thinnest_first(self) -> list[tuple[str, GroupLoss]]:
        return sorted(self.by_subject.items(), key=lambda pair: (pair[1].kept_share, pair[0]))

    def subject_loss_rows(self) -> list[list[object]]:
        """Per subject, most thinned first: subject, items, rows in, kept, kept share, dropped by reason."""
        return [[name, g.items, g.rows_in, g.kept, f"{g.kept_share:.0%}",
                 ", ".join(f"{code} {count}" for code, count in sorted(g.drop_reasons.items())) or "-"]
                for name, g in self.subjects_thinnest_first()]  # fmt: skip

    def subject_mix_line(self) -> str:
        """One line: how far the spoken set's subject mix is from the text set's, and the subject that lost most."""
        distance = self.subject_mix_distance
        if distance is None:
            return ""
        name, worst = self.subjects_thinnest_first()[0]
        return (f"The spoken set's subject mix is {distance:.1%} from the text set's (total variation distance: the "
                f"share of its rows that would have to change subject to match); "
                f"{sum(g.dropped > 0 for g in self.by_subject.values())} of {len(self.by_subject)} subjects lost rows "
                f"at the gate, most of all {name} ({worst.kept} of {worst.rows_in} rows kept).")


class Totals(Record):
    items_in: int
    item_voice_pairs_in: int
    kept: int
    dropped: int
    distinct_clips: int
    clip_attempts: int
    clips_rejected: int


class Integrity(Record):
    """The clip-store check of assembly: every kept clip is hashed before it is embedded; a damaged one is re-made."""

    clips_checked: int
    clips_remade: list[str] = Field(default_factory=list)  # "<row id> <role>: why it was re-made"


class Histogram(Record):
    edges: list[float]
    counts: list[int]


class Distribution(Record):
    """Error rates of a group of attempts (``n`` 0: none measured, no statistics)."""

    n: int
    mean: float | None = None
    median: float | None = None
    p90: float | None = None
    p95: float | None = None
    max: float | None = None
    zero_fraction: float | None = None
    histogram: Histogram | None = None


class GroupSummary(Record):
    attempts: int
    clips: int
    status: dict[str, int]
    final_status: dict[str, int]
    metrics: list[str]
    error_rate: Distribution
    final_error_rate: Distribution
    reject_reasons: dict[str, int]
    final_reject_reasons: dict[str, int]
    retried_clips: int
    kept_on_reference: int = 0  # clips misheard on every attempt, kept on the reference's likelihood


class VoiceGroupSummary(GroupSummary):
    task: str
    language: str
    voice: str


class VerificationSummary(Record):
    """The audit condensed (:func:`s2sbench.pipeline.gate.verify.summarize_checks`)."""

    asr_models: list[str]
    overall: GroupSummary
    groups: list[VoiceGroupSummary]


class BuildReport(Record):
    schema_version: Literal[SCHEMA_VERSION] = SCHEMA_VERSION
    origin: Literal["build", "import-original"] = "build"
    imported_from: list[str] = Field(default_factory=list)  # the original-layout files of an import
    tasks: dict[str, TaskReport]
    totals: Totals
    verification: VerificationSummary
    integrity: Integrity
    voices: dict[str, Voice]
    normalization: Normalization
    clip_store: str
    engines: list[str]
    asr_models: list[str]
    software: dict[str, str]
    devices: list[str] = Field(default_factory=lambda: ["cpu"])  # where its clips were made and checked (from the ids)
    costs: CostTable | None = None  # where the build's time went (None: an import, or a report of an older s2sbench)

    def task_config(self, name: str) -> TaskConfig | None:
        entry = self.tasks.get(name)
        return entry.config if entry is not None else None

    def low_yield_warnings(self) -> list[str]:
        """A line for each task that kept under half of its rows: the commonest reason its clips failed the gate, and
        the voice check that says in a minute whether the voice reads the language."""
        lines = []
        for name, task in self.tasks.items():
            if task.item_voice_pairs_in == 0 or task.kept * 2 >= task.item_voice_pairs_in:
                continue
            reasons: Counter[str] = Counter()
            for group in self.verification.groups:
                if group.task == name:
                    reasons.update(group.final_reject_reasons)
            commonest = (reasons or Counter(task.drop_reasons)).most_common(1)
            why = ""
            if commonest:
                code, count = commonest[0]
                why = f"; the commonest reason: {code} ({count} clip{'s' if count != 1 else ''})"
            voices = " ".join(f"--voice {voice}" for voice in task.voices)
            lines.append(f"task {name} kept {task.kept} of {task.item_voice_pairs_in} rows{why}. Check that each voice "
                         f"reads {task.language} as the judge hears it: s2sbench voices --check {voices}")
        return lines

