"""What a build would have kept, and cost, under another retry policy: fewer attempts, or the reference margin asked
earlier. It replays the build's own recorded attempts instead of building again. A build in progress (or stopped) is
read from its finished shards, with its tasks' settings as recorded when it started, and the clip store ``--store``.

    python bench/retry_replay.py BUILD [--store STORE] [--policy MAX[:AFTER] ...] [--margins FILE] [--by source|voice|task]

A policy is ``gate.max_attempts`` and, after a colon, ``gate.reference_keep_after`` (``6:1``: at most 6 attempts, a
clip within the reference margin kept from attempt 1 on). Each is checked as a task file's gate is, and replayed
through the gate's own policy (``AttemptPolicy``): an attempt is replayed by its recorded verdict, which is exact,
since an attempt is the same audio and transcript whatever came before it (seed, reading and rate are the attempt's).
Where a policy asks a margin that the build never asked, the build's judge scores the clip from the store, once:
the margins are kept in ``--margins`` (default: ``retry_replay_margins.jsonl`` in the build folder's ``work/``) and a rerun reads them.

The first line replays the build's own policy: its rows must come out as the build kept them, or the replay says how
many did not. A row needing an attempt that the build never made (a policy with more attempts than the build's)
counts as "not recorded". CPU is each row's own measurement (``costs.jsonl``): its first attempts as metered, each
retry its row's mean retry (less the margins it asked), each margin asked the mean that this replay measured; the
ratio is against the build's own policy replayed the same way, which gives back what the build metered.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePath

from pydantic import ValidationError

from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.manifest import ResumableJsonlWriter, iter_records
from s2sbench.pipeline.core.records import ClipCheck, Item, Reason, Record
from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.gate.attempts import KEPT_STATUSES, AttemptPolicy
from s2sbench.pipeline.gate.verify import Verifier, asks_margin
from s2sbench.pipeline.items.task_config import GateConfig, TaskConfig
from s2sbench.pipeline.machine.costs import RowCost
from s2sbench.pipeline.speech.audio import ClipStore

class Margin(Record):
    """A reference margin this replay asked the judge for (the cache of ``--margins``)."""

    id: str  # the check's id: "<item>@<voice>|<role>|<attempt>"
    clip_key: str
    asr_model: str
    margin: float | None  # None: the judge could not score the texts
    cpu_s: float | None  # what asking it cost, where this replay measured it


@dataclass(frozen=True)
class Policy:
    max_attempts: int
    keep_after: int | None = None

    @classmethod
    def parse(cls, text: str) -> "Policy":
        head, _, tail = text.partition(":")
        try:
            return cls(int(head), int(tail) if tail else None)
        except ValueError:
            raise argparse.ArgumentTypeError(f"policy {text!r}: MAX or MAX:AFTER, two whole numbers") from None

    def gate(self, task: TaskConfig, margin_nats: float | None) -> GateConfig:
        """``task``'s gate under this policy and reference margin, checked as a task file's gate is."""
        try:
            return GateConfig.model_validate({**task.gate.model_dump(), "max_attempts": self.max_attempts,
                                              "reference_keep_after": self.keep_after,
                                              "reference_margin_nats": margin_nats})
        except ValidationError as error:
            problems = "; ".join(f"gate.{'.'.join(map(str, problem['loc']))}: {problem['msg']}" if problem["loc"]
                                 else problem["msg"] for problem in error.errors())
            raise SystemExit(f"policy {self}: not a gate task {task.name} can have: {problems}") from None

    def __str__(self) -> str:
        return f"{self.max_attempts}" + (f":{self.keep_after}" if self.keep_after is not None else "")


@dataclass
class RecordedRow:
    """One (item, voice) of the build: its attempts per role, as the judge first gave them, and what it cost."""

    item: Item
    voice: str
    attempts: dict[str, dict[int, ClipCheck]]  # role -> attempt -> check
    cost: RowCost | None


@dataclass
class Replayed:
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    by_group: dict[str, collections.Counter] = field(default_factory=lambda: collections.defaultdict(collections.Counter))
    outcome_of: dict[str, str] = field(default_factory=dict)  # row id -> outcome
    margins_asked: int = 0
    first_cpu_s: float = 0.0
    # per measured row: its retries' CPU (the margins it asked included), its retry attempts, its margins asked, as
    # built; and the retry attempts this policy made
    retried: list[tuple[float, int, int, int]] = field(default_factory=list)

    def cpu_s(self, margin_cpu_s: float) -> float:
        """First attempts as measured; a retry at its row's mean, the margins the build asked taken out of the row's
        retries; each margin this policy asked at ``margin_cpu_s``."""
        retries = sum(max(0.0, cpu_s - margins * margin_cpu_s) * used / made
                      for cpu_s, made, margins, used in self.retried if made)
        return self.first_cpu_s + retries + self.margins_asked * margin_cpu_s


def as_first_heard(check: ClipCheck) -> ClipCheck:
    """The verdict the judge gave the attempt, before the build kept it on the reference (which clears its reasons:
    only a clip failed on its error rate alone is ever kept that way)."""
    if not check.kept_on_reference:
        return check
    return check.model_copy(update={"passed": False, "status": "rejected", "kept_on_reference": False,
                                    "reasons": (Reason(code="error_rate", detail="kept on the reference"),)})


@dataclass
class RecordedBuild:
    """What the replay reads of a build: a finished one, or one in progress (or stopped) through its finished shards,
    with its tasks' settings as the build recorded them when it started."""

    build: BuildDir
    checks: list[ClipCheck]
    kept: set[str]  # the ids of the rows the build kept
    task_config: Callable[[str], TaskConfig | None]
    store: ClipStore
    progress: str = ""  # said after the build's name: "" when finished


def read_build(build: BuildDir, store_dir: Path | None) -> RecordedBuild:
    if build.verification_path.is_file():
        report = build.read_report()
        return RecordedBuild(build, build.read_verification(), {row.id for row in build.read_manifest()},
                             report.task_config, ClipStore(store_dir or Path(report.clip_store)))
    state = build.read_state()
    if state is None:
        raise SystemExit(f"{build.root}: not a build (no build.json); `s2sbench build` makes one")
    if store_dir is None:
        raise SystemExit(f"{build.root}: a build in progress: pass the clip store it uses (--store)")
    shards = build.finished_shards()
    return RecordedBuild(build, [check for shard in shards for check in shard.read_checks()],
                         {row.id for shard in shards for row in shard.read_rows()}, state.task_config,
                         ClipStore(store_dir), f" (in progress: its {len(shards):,} finished shards)")


def recorded_rows(recorded: RecordedBuild) -> list[RecordedRow]:
    build = recorded.build
    items = build.read_all_items()
    costs = {cost.id: cost for shard in build.finished_shards() for cost in shard.read_costs()}
    rows: dict[str, RecordedRow] = {}
    for check in recorded.checks:
        row_id = f"{check.item_id}@{check.voice}"
        if row_id not in rows:
            rows[row_id] = RecordedRow(items[check.item_id], check.voice, collections.defaultdict(dict), costs.get(row_id))
        rows[row_id].attempts[check.role][check.attempt] = as_first_heard(check)
    return list(rows.values())


class Margins:
    """The reference margins this replay asked the judge for, kept across runs in ``path`` (resumable JSONL)."""

    def __init__(self, path: Path):
        self.known = {margin.id: margin for margin in iter_records(path, Margin)} if path.exists() else {}
        self.writer = ResumableJsonlWriter(path, Margin)

    def get(self, check: ClipCheck) -> Margin | None:
        known = self.known.get(check.id)
        same = known is not None and (known.clip_key, known.asr_model) == (check.clip_key, check.asr_model)
        return known if same else None

    def add(self, margin: Margin) -> None:
        self.writer.write(margin)
        self.known[margin.id] = margin

    @property
    def measured_cpu_s(self) -> list[float]:
        return [margin.cpu_s for margin in self.known.values() if margin.cpu_s is not None]


class Judge:
    """One task's gate as ``AttemptPolicy.keep_on_reference`` asks it. A row's checks carry the margins already known
    (the build's, or ``margins``'), so only a new margin loads its clip and asks the judge; the margins a row consults
    are counted once, as the build counts them."""

    def __init__(self, task: TaskConfig, gate: GateConfig, margins: Margins):
        self.task, self.gate, self.margins = task, gate, margins
        self.asked: set[str] = set()

    @cached_property
    def verifier(self) -> Verifier:
        asr = get_asr(self.task.gate.asr.engine, self.task.gate.asr.model, **self.task.gate.asr.options)
        return Verifier(asr, self.gate, self.task.language)

    def with_known_margin(self, check: ClipCheck) -> ClipCheck:
        if (known := self.margins.get(check)) is None or not asks_margin(self.gate, check) or known.margin is None:
            return check
        return check.model_copy(update={"reference_margin": known.margin})

    def with_margin(self, check: ClipCheck, audio) -> ClipCheck:
        self.asked.add(check.id)
        if self.margins.get(check) is not None:  # asked before, and the judge could not score it
            return check
        start = time.process_time()
        scored = self.verifier.with_margin(check, audio)
        self.margins.add(Margin(id=check.id, clip_key=check.clip_key, asr_model=check.asr_model,
                                margin=scored.reference_margin, cpu_s=round(time.process_time() - start, 4)))
        return scored

    def on_reference(self, check: ClipCheck) -> ClipCheck | None:
        if check.reference_margin is not None:
            self.asked.add(check.id)
        return self.verifier.on_reference(check)


def audio_loader(store: ClipStore, check: ClipCheck) -> Callable:
    def load():
        entry = store.lookup(check.clip_key)
        if entry is None:
            raise SystemExit(f"{store.root}: clip {check.clip_key} ({check.id}) is not in the store; "
                             f"pass the store the build used (--store)")
        return store.load(entry.path, f"clip {check.id}")
    return load


def replay_row(row: RecordedRow, policy: AttemptPolicy, judge: Judge, store: ClipStore) -> tuple[str, dict[str, int]]:
    """The row's outcome under ``policy`` and the attempts it made per role: the speak stage's loop, over the recorded
    verdicts instead of new clips."""
    pending = set(row.attempts)
    checks: list[ClipCheck] = []
    used: collections.Counter = collections.Counter()
    audio_of: dict[str, Callable] = {}
    for attempt in policy.attempts():
        for role in sorted(pending):
            check = row.attempts[role].get(attempt)
            if check is None:
                last = row.attempts[role][max(row.attempts[role])]
                # the voice could not say the text: the build stopped there, and so would any policy
                unspeakable = any(reason.code == "synthesis_failed" for reason in last.reasons)
                return ("dropped" if unspeakable else "not recorded"), used
            used[role] += 1
            checks.append(judge.with_known_margin(check))
            if check.clip_key:
                audio_of[check.id] = audio_loader(store, check)
            if check.status in KEPT_STATUSES:
                pending.discard(role)
        if not pending:
            return "passed", used
        if policy.asks_margin_after(attempt) and policy.keep_on_reference(checks, sorted(pending), judge, audio_of):
            return "on the reference", used
    return "dropped", used


def group_of(row: RecordedRow, by: str) -> str:
    if by == "voice":
        return row.voice
    if by == "task":
        return row.item.task
    return PurePath(row.item.source.file).stem


def replay(rows: list[RecordedRow], recorded: RecordedBuild, policy: Policy, margin_nats: float | None,
           margins: Margins, by: str) -> Replayed:
    result = Replayed()
    judges: dict[str, Judge] = {}
    for row in rows:
        task = recorded.task_config(row.item.task)
        if task.name not in judges:
            judges[task.name] = Judge(task, policy.gate(task, margin_nats), margins)
        judge = judges[task.name]
        judge.asked.clear()
        outcome, used = replay_row(row, AttemptPolicy(judge.gate), judge, recorded.store)
        result.outcomes[outcome] += 1
        result.by_group[group_of(row, by)][outcome] += 1
        result.outcome_of[f"{row.item.id}@{row.voice}"] = outcome
        result.margins_asked += len(judge.asked)
        if row.cost is not None:
            result.first_cpu_s += row.cost.synthesis.cpu_s + row.cost.gate.cpu_s
            made = retry_attempts({role: len(attempts) for role, attempts in row.attempts.items()})
            margins_built = sum(check.reference_margin is not None
                                for attempts in row.attempts.values() for check in attempts.values())
            result.retried.append((row.cost.retries.cpu_s, made, margins_built, retry_attempts(used)))
    return result


def retry_attempts(attempts_per_role: dict[str, int]) -> int:
    return sum(max(0, count - 1) for count in attempts_per_role.values())


def kept(counter: collections.Counter) -> int:
    return counter["passed"] + counter["on the reference"]


def as_built(recorded: RecordedBuild, rows: list[RecordedRow]) -> tuple[Policy, float | None]:
    """The build's own policy and reference margin (one for all its tasks, or the replay would mix policies)."""
    gates = {(gate.max_attempts, gate.reference_keep_after, gate.reference_margin_nats)
             for gate in (recorded.task_config(task).gate for task in {row.item.task for row in rows})}
    if len(gates) != 1:
        raise SystemExit("the build's tasks have different retry policies: replay a build of one task at a time")
    max_attempts, keep_after, margin_nats = gates.pop()
    return Policy(max_attempts, keep_after), margin_nats


def table(build_dir: Path, store_dir: Path | None, policies: list[Policy], margin_nats: float | None,
          margins_path: Path | None, by: str, no_margin: bool = False) -> str:
    recorded = read_build(BuildDir(build_dir), store_dir)
    rows = recorded_rows(recorded)
    if not rows:
        raise SystemExit(f"{build_dir}: no attempts recorded")
    built, built_margin = as_built(recorded, rows)
    margins = Margins(margins_path or build_dir / "work" / "retry_replay_margins.jsonl")
    baseline = replay(rows, recorded, built, built_margin, margins, by)
    margin = None if no_margin else built_margin if margin_nats is None else margin_nats
    results = [(built, built_margin, baseline)] + [
        (policy, margin, replay(rows, recorded, policy, margin, margins, by)) for policy in policies]
    margins.writer.close()
    differ = sum((row_id in recorded.kept) != (outcome in ("passed", "on the reference"))
                 for row_id, outcome in baseline.outcome_of.items())
    measured = margins.measured_cpu_s
    margin_cpu_s = sum(measured) / len(measured) if measured else 0.0
    attempts = sum(len(by_attempt) for row in rows for by_attempt in row.attempts.values())
    lines = [
        f"Build `{build_dir}`{recorded.progress}: {len(rows):,} rows, {attempts:,} attempts. Its own policy replayed (the first line) keeps "
        + ("every row as the build did." if not differ else f"{differ:,} rows otherwise than the build did."),
        f"A margin asked costs {margin_cpu_s:.2f} CPU s (the mean of the {len(measured):,} this replay measured).",
        "",
        f"| max_attempts | reference_keep_after | margin (nats) | rows kept | lowest {by} | kept on the reference "
        f"| not recorded | margins asked | CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for policy, margin, result in results:
        total = sum(result.outcomes.values())
        group, counts = min(result.by_group.items(), key=lambda entry: (kept(entry[1]) / sum(entry[1].values()), entry[0]))
        lines.append(
            f"| {policy.max_attempts}{' (as built)' if result is baseline else ''} | {policy.keep_after or '-'} "
            f"| {margin if margin is not None else '-'} | {kept(result.outcomes):,}/{total:,} "
            f"({kept(result.outcomes) / total:.1%}) | {group} {kept(counts) / sum(counts.values()):.1%} "
            f"| {result.outcomes['on the reference']:,} | {result.outcomes['not recorded']:,} | {result.margins_asked:,} "
            f"| {result.cpu_s(margin_cpu_s) / baseline.cpu_s(margin_cpu_s):.2f}x |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--store", type=Path, help="the clip store the build used (default: the build report's)")
    parser.add_argument("--policy", type=Policy.parse, action="append", default=[],
                        help="MAX or MAX:AFTER (repeatable): gate.max_attempts and gate.reference_keep_after")
    parser.add_argument("--margin-nats", type=float,
                        help="gate.reference_margin_nats for the policies (default: the build's)")
    parser.add_argument("--no-margin", action="store_true", help="replay the policies without the reference margin "
                        "(a gate calibrated to keep none on it)")
    parser.add_argument("--margins", type=Path, help="where the margins asked are kept (default: the build folder's work/retry_replay_margins.jsonl)")
    parser.add_argument("--by", choices=("source", "voice", "task"), default="source",
                        help="the groups whose lowest share of rows kept is shown (source: the item's source file)")
    args = parser.parse_args()
    if args.no_margin and args.margin_nats is not None:
        parser.error("--no-margin and --margin-nats: choose one")
    print(table(args.build_dir, args.store, args.policy, args.margin_nats, args.margins, args.by, args.no_margin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
