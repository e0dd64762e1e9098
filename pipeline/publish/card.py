"""The dataset card of a published build: how the set was made, read from the build's own records.

Counts come from the records (``manifest.jsonl``, ``verification.jsonl``, ``drops.jsonl``), not from prose, so the
card cannot disagree with the data; drops are counted by their reason code. Task settings (source, gate
thresholds) come from the build report (an import of the original layout has none: then the task registry); voices
from the report, else the voice registry.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from s2sbench.pipeline.build_report import BuildReport
from s2sbench.pipeline.builddir import BuildDir
from s2sbench.pipeline.records import ClipCheck
from s2sbench.pipeline.tasks import GateConfig, SourceConfig, TaskConfig

DEFAULT_SPLIT = "test"

# What a card says about each source format: the Hub licence id, a sentence of terms, and the BibTeX to cite.
SOURCES = {
    "storycloze": ("other", "Story Cloze Test (ROCStories, spring 2016), distributed by its authors under their terms of "
                   "use; check them before redistributing the stories.", "mostafazadeh2016"),
    "xstorycloze": ("cc-by-sa-4.0", "XStoryCloze (professional translations of the Story Cloze Test), CC BY-SA 4.0.", "lin2022"),
    "cmmlu": ("cc-by-nc-4.0", "CMMLU questions (rewritten into statements for sCMMLU), CC BY-NC 4.0.", "li2023cmmlu"),
    "jsonl": ("other", "Items read from a JSONL file; its licence is whatever its author set.", None),
}
DEMO_SOURCE = ("apache-2.0", "Demo items written for s2sbench, under the s2sbench licence (Apache-2.0).", None)

CITATIONS = {
    "s2sbench": """@article{fang2025s2sbench,
  title   = {S2SBench: A Benchmark for Quantifying Intelligence Degradation in Speech-to-Speech Large Language Models},
  author  = {Fang, Yuanbo and others},
  journal = {arXiv preprint arXiv:2505.14438},
  year    = {2025}
}""",
    "mostafazadeh2016": """@inproceedings{mostafazadeh2016corpus,
  title     = {A Corpus and Cloze Evaluation for Deeper Understanding of Commonsense Stories},
  author    = {Mostafazadeh, Nasrin and others},
  booktitle = {Proceedings of NAACL-HLT},
  year      = {2016}
}""",
    "lin2022": """@inproceedings{lin2022fewshot,
  title     = {Few-shot Learning with Multilingual Generative Language Models},
  author    = {Lin, Xi Victoria and others},
  booktitle = {Proceedings of EMNLP},
  year      = {2022}
}""",
    "li2023cmmlu": """@article{li2023cmmlu,
  title   = {CMMLU: Measuring Massive Multitask Language Understanding in Chinese},
  author  = {Li, Haonan and others},
  journal = {arXiv preprint arXiv:2306.09212},
  year    = {2023}
}""",
}


@dataclass(frozen=True)
class HubConfig:
    """One config of the Hub dataset: the rows of one task spoken by one voice."""

    name: str
    task: str
    voice: str
    split: str
    num_rows: int
    num_bytes: int
    files: tuple[str, ...]  # paths in the repo


@dataclass(frozen=True)
class TaskFacts:
    name: str
    language: str
    split: str
    source: SourceConfig | None  # None: not recorded (an import of a task outside the registry)
    gate: GateConfig | None
    voices: list[str]


@dataclass
class BuildDescription:
    """Everything the card says, gathered from a build directory."""

    build: BuildDir
    report: BuildReport
    tasks: dict[str, TaskFacts]
    voices: dict[str, dict]  # voice id -> engine, model, licence, description
    engines: dict[str, set[str]] = field(default_factory=dict)  # engine -> model versions seen in the clips
    rows: Counter = field(default_factory=Counter)  # (task, voice) -> kept rows
    drops: Counter = field(default_factory=Counter)  # (task, reason code) -> dropped item x voice pairs
    drop_examples: dict[tuple[str, str], str] = field(default_factory=dict)  # (task, reason code) -> one reason
    checks: list[ClipCheck] = field(default_factory=list)

    clips: int = 0
    clips_rewritten: int = 0  # clips whose normalized text differs from the text

    def task(self, name: str) -> TaskFacts:
        """The facts of a task, also for one the build's items folder lacks (from its report entry or the registry)."""
        if name not in self.tasks:
            self.tasks[name] = _task_facts(name, self.report)
        return self.tasks[name]

    def split_of(self, task: str) -> str:
        return self.task(task).split


def _task_facts(name: str, report: BuildReport) -> TaskFacts:
    entry = report.tasks.get(name)
    config: TaskConfig | None = entry.config if entry is not None else None
    if config is None:
        from s2sbench.pipeline.tasks import TaskConfigError, load_task

        try:
            config = load_task(name)
        except TaskConfigError:
            config = None  # an import of a task outside the registry: its source and gate are not known
    return TaskFacts(
        name=name, language=config.language if config else (entry.language if entry else "und"),
        split=(config.source.split if config else None) or DEFAULT_SPLIT,
        source=config.source if config else None, gate=config.gate if config else None,
        voices=config.voices if config else (entry.voices if entry else []),
    )  # fmt: skip


def _voice_facts(voice_ids: set[str], report: BuildReport) -> dict[str, dict]:
    fields = {"engine", "model", "licence", "description", "intelligibility"}
    voices = {voice: info.model_dump(include=fields) for voice, info in report.voices.items() if voice in voice_ids}
    missing = voice_ids - set(voices)
    if missing:
        from s2sbench.pipeline.tts.voices import load_voices

        registry = load_voices()
        for voice in missing:
            known = registry.get(voice)
            voices[voice] = known.model_dump(include=fields) if known else {"licence": "unknown (not in the voice registry)"}
    return voices


def describe_build(build_dir: str | Path | BuildDir) -> BuildDescription:
    """Read a build directory's report and records into what the card needs."""
    build = BuildDir.of(build_dir)
    report = build.read_report()
    rows = build.read_manifest()
    description = BuildDescription(
        build=build, report=report, tasks={name: _task_facts(name, report) for name in build.task_names()},
        voices=_voice_facts({row.voice for row in rows}, report),
    )  # fmt: skip
    for row in rows:
        description.rows[(row.item.task, row.voice)] += 1
        for clip in row.clips.values():
            description.engines.setdefault(clip.engine, set()).add(clip.model_version)
            description.clips += 1
            description.clips_rewritten += clip.normalized_text != clip.text
    for drop in build.read_drops():
        key = (drop.task, drop.reason.code)
        description.drops[key] += 1
        description.drop_examples.setdefault(key, drop.reason.detail or drop.reason.code)
    description.checks = build.read_verification()
    return description


def size_category(rows: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if rows < bound:
            return name
    return "n>1M"


def source_terms(task: TaskFacts) -> tuple[str, str, str | None]:
    if task.source is None:
        return ("other", "Items imported from the original S2SBench layout; their licence is that of their source.", None)
    loader = task.source.loader
    if loader == "jsonl" and str(task.source.path or "").startswith("demo/"):
        return DEMO_SOURCE
    return SOURCES.get(loader, ("other", f"Items from the '{loader}' loader.", None))


def _error_rate_lines(checks: list[ClipCheck]) -> list[str]:
    lines = []
    for metric in sorted({check.metric for check in checks if check.error_rate is not None}):
        rates = sorted(check.error_rate for check in checks if check.metric == metric and check.error_rate is not None)
        p90 = rates[min(len(rates) - 1, int(0.9 * len(rates)))]
        lines.append(f"| {metric.upper()} | {len(rates)} | {statistics.fmean(rates):.3f} | {statistics.median(rates):.3f} | {p90:.3f} | {rates[-1]:.3f} |")
    return lines


def _yaml_header(build: BuildDescription, configs: list[HubConfig], features: dict, licence: str) -> str:
    import datasets
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    card_data = DatasetCardData(
        language=sorted({build.task(c.task).language for c in configs}) or None,
        license=licence, task_categories=["multiple-choice"],
        size_categories=[size_category(sum(c.num_rows for c in configs))],
        pretty_name=f"s2sbench build ({', '.join(sorted({c.task for c in configs}))})",
        tags=["audio", "speech", "spoken-language-understanding", "speech-llm", "s2sbench"],
        configs=[{"config_name": c.name, "data_files": [{"split": c.split, "path": f"{c.name}/{c.split}-*.parquet"}],
                  **({"default": True} if index == 0 else {})} for index, c in enumerate(configs)],
    )
    infos = DatasetInfosDict({
        c.name: datasets.DatasetInfo(
            config_name=c.name, features=datasets.Features.from_dict(features[c.name]),
            splits=datasets.SplitDict({c.split: datasets.SplitInfo(name=c.split, num_bytes=c.num_bytes, num_examples=c.num_rows)}),
            dataset_size=c.num_bytes,
        ) for c in configs
    })
    infos.to_dataset_card_data(card_data)
    return card_data.to_yaml()


def render_card(build: BuildDescription, configs: list[HubConfig], features: dict, repo_id: str, licence: str | None = None) -> str:
    """The README.md of the Hub repo: YAML header (configs, features, languages, licence, categories) and the story."""
    used = sorted({c.task for c in configs})
    terms = {task: source_terms(build.task(task)) for task in used}
    licences = {hub_id for hub_id, _, _ in terms.values()}
    licence = licence or (licences.pop() if len(licences) == 1 else "other")
    out = ["---", _yaml_header(build, configs, features, licence).rstrip(), "---", ""]
    out += [f"# {repo_id}", "",
            "Spoken benchmark items built with s2sbench (a reimplementation of S2SBench, arXiv:2505.14438): the context "
            "is speech (16 kHz), the candidate continuations are text. A speech LLM is scored by the likelihood it gives each "
            "candidate after hearing the context; comparing with the text-context score measures what speech costs it.", ""]
    out += ["## Configs", "", "| config | task | voice | split | rows |", "|---|---|---|---|---|"]
    out += [f"| `{c.name}` | {c.task} | {c.voice} | {c.split} | {c.num_rows} |" for c in configs]
    out += ["", f"Total rows: {sum(c.num_rows for c in configs)}.", ""]
    out += ["## Sources", ""]
    for task in used:
        facts = build.task(task)
        where = (facts.source.hub_id or facts.source.path if facts.source else None) or "(not recorded)"
        loader = facts.source.loader if facts.source else "?"
        out.append(f"- **{task}** ({facts.language}): loader `{loader}`, from `{where}`. {terms[task][1]}")
    out += ["", "## Speech synthesis", "", "| voice | engine | model | licence of the weights |", "|---|---|---|---|"]
    for voice in sorted({c.voice for c in configs}):
        info = build.voices.get(voice, {})
        label = f"{voice} (**low intelligibility**)" if info.get("intelligibility") == "low" else voice
        out.append(f"| {label} | {info.get('engine', '?')} | {info.get('model', '?')} | {info.get('licence', 'unknown')} |")
    out += ["", "Engine versions seen in the clips: " + "; ".join(f"{engine} ({', '.join(sorted(versions))})" for engine, versions in sorted(build.engines.items())) + "."]
    out += ["", f"Text normalization: {build.report.normalization.describe()}. In this build {build.clips_rewritten} of "
            f"{build.clips} clip texts were changed by it (each clip records `text` and `normalized_text`)."]
    out += ["", "## ASR verification gate", ""]
    for task in used:
        gate = build.task(task).gate
        if gate is None:
            out.append(f"- **{task}**: not verified by s2sbench (imported audio; `verification_status` is `unverified`).")
            continue
        out.append(f"- **{task}**: {gate.asr.engine} `{gate.asr.model}` transcribes every clip; a clip passes when its "
                   f"{gate.metric.upper()} is at most {gate.max_error_rate:g}, with up to {gate.max_attempts} synthesis "
                   "attempts (new seed each).")
    if build.checks:
        attempts = len(build.checks)
        rejected = sum(check.status == "rejected" for check in build.checks)
        unverified = sum(check.status == "unverified" for check in build.checks)
        out += ["", f"Attempts checked: {attempts}; rejected: {rejected}; unverified: {unverified}.", "",
                "| metric | attempts | mean | median | p90 | max |", "|---|---|---|---|---|---|", *_error_rate_lines(build.checks)]
    out += ["", "Item x voice pairs dropped (every attempt failed, or the source row was unusable), by reason:", ""]
    dropped = [(task, code, count) for (task, code), count in sorted(build.drops.items()) if task in used]
    out += [f"- {task}: {count} for `{code}` (e.g. {build.drop_examples[(task, code)]})" for task, code, count in dropped] or ["- none"]
    out += ["", "## Columns", "",
            "`context_audio` (Audio, 16 kHz) speaks `context`; `candidates` are the text continuations and `label` indexes "
            "the right one; `candidate_audio` holds spoken candidates when the task speaks them. `context_transcript`, "
            "`context_error_rate`, `context_metric` and `verification_status` are the ASR gate's verdict on the context clip; "
            "`source_file` and `source_row` point back to the source.", ""]
    first = configs[0] if configs else None
    name, split, task = (first.name, first.split, first.task) if first else ("CONFIG", DEFAULT_SPLIT, "TASK")
    out += ["## Use", "", "```python", "from datasets import DatasetDict, load_dataset", "",
            f'ds = load_dataset("{repo_id}", "{name}", split="{split}")', "```", "",
            "Evaluate a model with s2sbench (speech context vs text context on the same items): save the config where "
            "`s2sbench eval` reads a build's dataset, then run it (add `--task-file TASK.yaml` for a task that is not in "
            "the s2sbench task registry):", "", "```python",
            f'DatasetDict({{"{task.replace("-", "_")}": ds}}).save_to_disk("from-hub/dataset")', "```", "", "```bash",
            "s2sbench eval --dataset from-hub/ --model smollm2 --out results/", "```", ""]
    out += ["The build report of this set is `build_report.json` in this repo.", "", "## Citation", "", "```bibtex", CITATIONS["s2sbench"]]
    out += [CITATIONS[key] for key in sorted({cite for _, _, cite in terms.values() if cite})]
    out += ["```", ""]
    return "\n".join(out)
