"""One command per whole set: the plan, the resumable build, an independent check, publish --dry-run, eval and report,
each resumed where it stopped; then the set's results section, written from those outputs alone.

    python bench/whole_set.py TASK --data DIR --out DIR [--workers 2] [--limit N] [--sample 300] [--write-docs]

TASK is a registry task (``jcommonsenseqa``, ``scmmlu``, ``sstorycloze``) or a task YAML; ``--data`` is the folder its
``${S2SBENCH_DATA}`` names (``--source-path`` replaces the task's source instead). Everything goes under ``--out``:

    plan.json, plan.txt      the ``--dry-run`` plan, made once before the first clip
    build/, clips/           the build folder and its clip store (``s2sbench build ... --runner dask``)
    build.log, segments/     the build's log, and one file per run of it: start, last heartbeat, rows before and after
    check.json               the independent check: ``--sample`` random kept clips heard again by faster-whisper's own
                             ``transcribe`` (the task's Whisper, beam 5, its defaults otherwise), scored by the gate's
                             metric; the gate's own verdict on the same clips beside it
    hub/                     ``s2sbench publish build --dry-run hub`` (the staged repo and its card)
    eval/, report.html       ``s2sbench eval`` (the cascade: the task's Whisper, then Gemma 3 270M, or SmolLM2 for
                             English; T->T and S->T) and ``s2sbench report``
    section.md               the results section (date, commit, machine; plan beside actual; the resume; rows kept
                             per voice and why the rest were dropped; the check; accuracy)

Run the same command again after a kill (or a session's end): each finished step is skipped, the build and the eval
resume from their ledgers. A build's wall time is the sum of its runs, counted by a heartbeat every 15 s (a kill
costs at most one; a gap of over 30 s, the command's process group stopped with SIGSTOP, is counted as a pause).
``--write-docs`` puts section.md between ``<!-- whole-TASK:start -->`` and ``<!-- whole-TASK:end -->`` in
docs/whole-sets.md. ``--steps`` runs some steps only (for example ``--steps docs`` to rewrite the section).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme import write_section  # noqa: E402
from zh_gate_check import wilson  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "whole-sets.md"
STEPS = ("plan", "build", "check", "publish", "eval", "report", "docs")
HEARTBEAT_S = 15
BEAM = 5


def s2sbench(*argv: object) -> list[str]:
    return [sys.executable, "-m", "s2sbench", *map(str, argv)]


class WholeSet:
    def __init__(self, args: argparse.Namespace):
        from s2sbench.flows.build import load_build_tasks

        self.args = args
        self.out = args.out.resolve()
        self.build_dir, self.store = self.out / "build", self.out / "clips"
        self.env = {**os.environ, **({"S2SBENCH_DATA": str(args.data.resolve())} if args.data else {})}
        os.environ.update(self.env)  # the task file's ${S2SBENCH_DATA} resolves in this process too
        self.task = load_build_tasks([args.task], str(args.source_path) if args.source_path else None)[0]

    def build_arguments(self) -> list[object]:
        more = (["--limit", self.args.limit] if self.args.limit else []) + (
            ["--source-path", self.args.source_path] if self.args.source_path else [])
        return [self.args.task, "--out", self.build_dir, "--store", self.store, "--runner", "dask",
                "--workers", self.args.workers, *more]

    # --- steps ----------------------------------------------------------------------------------------------------
    def plan(self) -> None:
        if (self.out / "plan.json").exists():
            return
        from s2sbench.pipeline.run.build_plan import plan_build

        plan = plan_build([self.task], self.build_dir, limit=self.args.limit, shard_size=8, seed=0, store_root=self.store,
                          runner="dask", workers=self.args.workers)  # fmt: skip
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "plan.txt").write_text(plan.text() + "\n", encoding="utf-8")
        atomic_json(self.out / "plan.json", plan.model_dump(mode="json"))

    def rows_done(self) -> int:
        from s2sbench.pipeline.buildfolder.builddir import BuildDir

        work = BuildDir(self.build_dir).work_dir
        return sum(count_lines(path) for pattern in ("*/shard-*/rows.jsonl", "*/shard-*/drops.jsonl")
                   for path in work.glob(pattern))  # fmt: skip

    def build(self) -> None:
        if (self.out / "build.done").exists():
            return
        segments = self.out / "segments"
        segments.mkdir(parents=True, exist_ok=True)
        record = {"segment": len(list(segments.glob("*.json"))) + 1, "started": time.time(), "rows_before": self.rows_done(),
                  "store_clips_before": count_clips(self.store), "command": command_text(self.build_arguments()),
                  "wall_s": 0.0, "paused_s": 0.0, "commit": commit()}
        path = segments / f"{record['segment']:03d}.json"
        with open(self.out / "build.log", "a", encoding="utf-8") as log:
            process = subprocess.Popen(s2sbench("build", *self.build_arguments()), stdout=log, stderr=subprocess.STDOUT,
                                       env=self.env)  # fmt: skip
            previous = time.time()
            while process.poll() is None:
                time.sleep(HEARTBEAT_S)
                now = time.time()
                # a gap far past the heartbeat is a pause (the process group stopped with SIGSTOP), not build time
                record["wall_s" if now - previous <= 2 * HEARTBEAT_S else "paused_s"] += now - previous
                previous = now
                atomic_json(path, {**record, "last_seen": now})
        record["wall_s"] += time.time() - previous
        atomic_json(path, {**record, "last_seen": time.time(), "exit": process.returncode, "rows_after": self.rows_done(),
                           "store_clips_after": count_clips(self.store)})  # fmt: skip
        if process.returncode != 0:
            raise SystemExit(f"the build exited {process.returncode}: see {self.out / 'build.log'}")
        (self.out / "build.done").touch()

    def check(self) -> None:
        if (self.out / "check.json").exists():
            return
        atomic_json(self.out / "check.json", independent_check(self.build_dir, self.store, self.task, self.args.sample,
                                                               self.args.seed))  # fmt: skip

    def publish(self) -> None:
        if not (self.out / "hub" / "README.md").exists():
            run(s2sbench("publish", self.build_dir, "--repo-id", self.args.repo_id or f"s2sbench/{self.task.name}",
                         "--dry-run", self.out / "hub"), self.out / "publish.log", self.env)  # fmt: skip

    def model_arguments(self) -> list[str]:
        lm = "smollm2" if self.task.language.split("-")[0] == "en" else "gemma3-270m"
        given = dict(argument.split("=", 1) for argument in self.args.model_arg)
        chosen = {"asr_engine": "faster-whisper", "asr_model": self.task.gate.asr.model, "lm": lm, **given}
        return [part for key, value in chosen.items() for part in ("--model-arg", f"{key}={value}")]

    def eval(self) -> None:
        if not (self.out / "eval.done").exists():
            run(s2sbench("eval", "--dataset", self.build_dir, "--model", "cascade", *self.model_arguments(), "--modes",
                         "T->T", "S->T", "--out", self.out / "eval"), self.out / "eval.log", self.env)  # fmt: skip
            (self.out / "eval.done").touch()

    def report(self) -> None:
        if not (self.out / "report.html").exists():
            run(s2sbench("report", self.out / "eval", "--build", self.build_dir, "--store", self.store, "--out",
                         self.out / "report.html"), self.out / "report.log", self.env)  # fmt: skip

    def docs(self) -> None:
        section = results_section(self)
        (self.out / "section.md").write_text(section + "\n", encoding="utf-8")
        print(section)
        if self.args.write_docs:
            write_section(f"whole-{self.task.name}", section, self.args.docs)


# --- the independent check ----------------------------------------------------------------------------------------
def independent_check(build_dir: Path, store_dir: Path, task, sample_size: int, seed: int) -> dict:
    """``sample_size`` random kept clips heard again through faster-whisper's ``transcribe`` (beam 5, its defaults
    otherwise: the decoding a user checking clips by hand gets), scored as the gate scores; the gate's verdict too."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.gate.attempts import KEPT_STATUSES
    from s2sbench.pipeline.gate.verify import final_checks, normalize, score_normalized
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.text.languages import gate_metric

    checks = [check for check in final_checks(BuildDir(build_dir).read_verification())
              if check.status in KEPT_STATUSES and check.clip_key]  # fmt: skip
    sample = random.Random(seed).sample(checks, min(sample_size, len(checks)))
    language, threshold = task.language, task.gate.max_error_rate
    metric = gate_metric(task.gate.metric, language)
    judge = get_asr("faster-whisper", task.gate.asr.model, beam_size=BEAM, batch_size=1, num_workers=1)
    store = ClipStore(store_dir)
    clips = []
    for check in sample:
        audio = store.load(store.lookup(check.clip_key).path, check.clip_key)
        segments, _ = judge.model.transcribe(audio, language=language.split("-")[0], beam_size=BEAM)
        heard = "".join(segment.text for segment in segments)
        score = score_normalized(check.reference, normalize(heard, language), metric)
        clips.append({"item": check.item_id, "voice": check.voice, "transcript": heard, "rate": round(score.rate, 4),
                      "gate_rate": check.error_rate, "on_reference": check.kept_on_reference})
    return {"sample": len(sample), "kept_clips": len(checks), "seed": seed, "metric": metric, "threshold": threshold,
            "judge": f"{judge.model_id} transcribe beam {BEAM}", "gate_judge": sorted({c.asr_model for c in sample}),
            "clips": clips}


# --- the section --------------------------------------------------------------------------------------------------
def results_section(whole: WholeSet) -> str:
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.run.build_plan import format_bytes

    out, task = whole.out, whole.task
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    build = BuildDir(whole.build_dir)
    report, checks = build.read_report(), build.read_verification()
    segments = [json.loads(path.read_text(encoding="utf-8")) for path in sorted((out / "segments").glob("*.json"))]
    wall = sum(segment["wall_s"] for segment in segments)
    costs = report.costs
    cpu = sum(stage.cpu_s for stage in costs.stages) if costs else float("nan")
    disk = {"clip store": du(whole.store), "build folder": du(whole.build_dir), "staged Hub repo": du(out / "hub"),
            "eval folder": du(out / "eval")}
    given = (" --data DATA" if whole.args.data else "") + (" --source-path SOURCE" if whole.args.source_path else "")
    built_at = sorted({segment.get("commit", "not recorded") for segment in segments})
    lines = [
        f"Made by `python bench/whole_set.py {task.name}{given} --out OUT --workers {whole.args.workers}"
        + (f" --limit {whole.args.limit}" if whole.args.limit else "") + f"` on {today()}, built at commit "
        f"{', '.join(built_at)}, this section written at {commit()}, {machine()}. Its outputs are under OUT; this "
        "section is `OUT/section.md`.",
        "",
        "**Plan beside actual.**",
        "",
        "| | wall | CPU (user + system, every process) | disk |",
        "|---|---|---|---|",
        f"| plan (`--dry-run`, {plan['tasks'][0]['costs_from']}) | {duration(plan['wall_s'])} | {duration(plan['cpu_s'])} "
        f"| {format_bytes(plan['store_bytes'])} store + {format_bytes(plan['dataset_bytes'])} dataset |",
    ]
    for segment, following in zip(segments, [*segments[1:], None]):
        ended = "resumed, " if segment["segment"] > 1 else ""
        end = "finished" if segment.get("exit") == 0 else ("killed" if "exit" not in segment else f"exit {segment['exit']}")
        # a killed run wrote no rows_after: the next run's start is where it left off
        after = segment.get("rows_after", following["rows_before"] if following else None)
        lines.append(f"| run {segment['segment']} ({ended}{end}: rows {segment['rows_before']:,} -> "
                     f"{'?' if after is None else f'{after:,}'}) | {duration(segment['wall_s'])}"
                     + (f" (+{duration(segment['paused_s'])} paused, not counted)" if segment["paused_s"] else "")
                     + " | | |")
    lines += [f"| **actual** | **{duration(wall)}** | **{duration(cpu)}** (metered per row) | "
              f"{format_bytes(disk['clip store'])} store, {format_bytes(disk['build folder'])} build folder |", ""]
    lines += [*resume_lines(segments, checks), ""]
    lines += ["**Where the time went** (the build report's cost table; wall adds up each worker's):", "",
              costs.markdown() if costs else "(no cost table)", ""]
    lines += [*kept_lines(build, report, checks, task.name), ""]
    lines += [*check_lines(json.loads((out / "check.json").read_text(encoding="utf-8"))), ""]
    lines += ["**Disk.** " + "; ".join(f"{name} {format_bytes(size)}" for name, size in disk.items()), ""]
    lines += [*eval_lines(out), ""]
    return "\n".join(line for line in lines if line is not None).rstrip()


def resume_lines(segments: list[dict], checks: list) -> list[str]:
    """What each run of the build started from, and whether any clip attempt was recorded twice."""
    from collections import Counter

    if len(segments) < 2:
        return ["**The resume.** The build ran once, start to end."]
    runs = [f"run {s['segment']} started at {s['rows_before']:,} rows" + (
        f" and ended at {s['rows_after']:,}" if "rows_after" in s else ", was killed after its last heartbeat")
        for s in segments]
    attempts = Counter((check.item_id, check.voice, check.role, check.attempt) for check in checks)
    repeated = sum(count - 1 for count in attempts.values() if count > 1)
    made = [f"run {s['segment']} {s['store_clips_after'] - s['store_clips_before']:,}" for s in segments
            if "store_clips_after" in s]
    return [f"**The resume.** {len(segments)} runs of the same command: " + "; ".join(runs) + ". Each run started "
            f"from the rows the one before had finished: nothing finished was made again, a row cut off by the kill "
            f"was. Clips added to the store by the finished runs: {', '.join(made) or '-'}. Verification records "
            f"repeated for one clip attempt: {repeated}."]


def kept_lines(build, report, checks: list, task_name: str) -> list[str]:
    from collections import Counter

    entry = report.tasks[task_name]
    lines = ["**Rows kept, and why the others were dropped.**", "", "| voice | rows | kept | dropped | first attempts "
             "passed | retried clips | kept on the reference | why the last attempts of dropped clips failed |",
             "|---|---|---|---|---|---|---|---|"]
    kept = Counter(row.voice for row in build.read_manifest() if row.item.task == task_name)
    dropped = Counter(drop.voice for drop in build.read_drops() if drop.task == task_name and drop.stage == "speak")
    for group in report.verification.groups:
        if group.task != task_name:
            continue
        rows = kept[group.voice] + dropped[group.voice]
        firsts = [check for check in checks if check.voice == group.voice and check.attempt == 1]
        passed_first = sum(check.status == "passed" for check in firsts)
        reasons = ", ".join(f"`{code}` {count}" for code, count in sorted(group.final_reject_reasons.items(),
                                                                         key=lambda pair: -pair[1])) or "-"
        lines.append(f"| {group.voice} | {rows:,} | {kept[group.voice]:,} ({kept[group.voice] / max(rows, 1):.1%}) | "
                     f"{dropped[group.voice]:,} | {passed_first:,} of {len(firsts):,} clips ({passed_first / max(len(firsts), 1):.1%}) "
                     f"| {group.retried_clips:,} | {group.kept_on_reference:,} | {reasons} |")
    lines += ["", f"In all {entry.kept:,} of {entry.item_voice_pairs_in:,} question x voice rows kept "
                  f"({entry.kept / max(entry.item_voice_pairs_in, 1):.1%}); {entry.source_rows_dropped} source rows "
                  f"dropped at load ({', '.join(f'{k} {v}' for k, v in (entry.items.source_drop_reasons if entry.items else {}).items()) or 'none'})."]
    return lines


def check_lines(check: dict) -> list[str]:
    clips, threshold = check["clips"], check["threshold"]
    heard = sum(clip["rate"] <= threshold for clip in clips)
    gate = sum(clip["gate_rate"] is not None and clip["gate_rate"] <= threshold and not clip["on_reference"] for clip in clips)
    n = len(clips)
    per_voice = {}
    for clip in clips:
        per_voice.setdefault(clip["voice"], []).append(clip["rate"] <= threshold)
    voices = "; ".join(f"{voice} {sum(oks)}/{len(oks)}" for voice, oks in sorted(per_voice.items()))
    return [f"**Independent check.** {n} random kept clips (of {check['kept_clips']:,}, seed {check['seed']}) heard again "
            f"by {check['judge']}, scored by {check['metric'].upper()} as the gate scores: **{heard}/{n} "
            f"({heard / n:.1%}, 95% {wilson(heard, n)}) at <= {threshold:g}** ({voices}). The gate's own decoding "
            f"({', '.join(check['gate_judge'])}) had heard {gate}/{n} ({gate / n:.1%}) of the same clips at <= "
            f"{threshold:g} (a clip it did not hear was kept on the reference margin). Two decodings, two figures."]


def eval_lines(out: Path) -> list[str]:
    results = out / "eval" / "results.md"
    if not results.exists():
        return ["**Accuracy.** (the eval has not finished)"]
    blocks = results.read_text(encoding="utf-8").split("\n\n")
    table = next((block.strip() for block in blocks if block.lstrip().startswith("| run |")), "(no table)")
    return ["**Accuracy** (`s2sbench eval`, the cascade; `OUT/eval/results.md`, the report `OUT/report.html`):", "",
            table]


# --- small helpers ------------------------------------------------------------------------------------------------
def run(command: list[str], log: Path, env: dict) -> None:
    with open(log, "a", encoding="utf-8") as handle:
        code = subprocess.call(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    if code != 0:
        raise SystemExit(f"{command_text(command[2:])} exited {code}: see {log}")


def command_text(argv: list[object]) -> str:
    return " ".join(str(part) for part in argv)


def atomic_json(path: Path, value: dict) -> None:
    from s2sbench.pipeline.core.manifest import atomic_write_text

    atomic_write_text(path, json.dumps(value, ensure_ascii=False, indent=1) + "\n")


def count_lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


def count_clips(store: Path) -> int:
    return sum(1 for _ in store.rglob("*.wav")) if store.exists() else 0


def du(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) if folder.exists() else 0


def duration(seconds: float) -> str:
    if seconds != seconds:
        return "-"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s"


def today() -> str:
    return datetime.date.today().isoformat()


def commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() or "unknown"


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo", encoding="utf-8")
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({model}), {memory:.0f} GiB, no GPU" if shutil.which("nvidia-smi") is None else (
        f"{os.cpu_count()} cores ({model}), {memory:.0f} GiB, a GPU")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", help="a registry task name or a task YAML")
    parser.add_argument("--data", type=Path, help="the folder ${S2SBENCH_DATA} names in the task file")
    parser.add_argument("--source-path", type=Path, help="replace the task's source (a file or folder)")
    parser.add_argument("--out", type=Path, required=True, help="where every output goes (resumed from)")
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes (default 2)")
    parser.add_argument("--limit", type=int, help="the first N items only (a slice, to try the command)")
    parser.add_argument("--sample", type=int, default=300, help="kept clips the independent check hears (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="the check's sample (default 0)")
    parser.add_argument("--repo-id", help="the Hub repo the dry-run publish names (default s2sbench/TASK)")
    parser.add_argument("--model-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="cascade options beyond the defaults (the task's Whisper; Gemma 3 270M, SmolLM2 for English)")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"which steps, in order (default {','.join(STEPS)})")
    parser.add_argument("--write-docs", action="store_true", help="put the section into --docs")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the page the section goes to (default docs/whole-sets.md)")
    args = parser.parse_args(argv)
    steps = args.steps.split(",")
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"--steps: unknown {', '.join(unknown)} (known: {', '.join(STEPS)})")
    whole = WholeSet(args)
    for step in STEPS:
        if step in steps:
            print(f"{datetime.datetime.now():%H:%M:%S} {step}", flush=True)
            getattr(whole, step)()
    return 0


if __name__ == "__main__":
    sys.exit(main())
