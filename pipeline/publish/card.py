"""The dataset card of a published build: how the set was made, read from the build's own records.

Counts come from the records (``manifest.jsonl``, ``verification.jsonl``, ``drops.jsonl``), not from prose, so the
card cannot disagree with the data; drops are counted by their reason code. Task settings (source, gate
thresholds) come from the build report (an import of the original layout has none: then the task registry); voices
from the report, else the voice registry.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.records import ClipCheck
from s2sbench.pipeline.buildfolder.configs import DEFAULT_SPLIT, config_name
from s2sbench.pipeline.items.task_config import GateConfig, LicenceConfig, SourceConfig, TaskConfig

TEMPLATE = Path(__file__).with_name("dataset_card.md.j2")


@dataclass(frozen=True)
class SourceTerms:
    """What the card says about a source: its licence (a Hub licence id, or ``other`` with a name and a link), a
    sentence of terms, and the BibTeX key to cite."""

    licence: LicenceConfig
    terms: str
    citation: str | None = None


UNKNOWN = LicenceConfig(id="unknown")
STORY_CLOZE_TERMS = LicenceConfig(id="other", name="story-cloze-terms", link="https://cs.rochester.edu/nlp/rocstories/")
# What a card says about each source format when its task file names no licence.
SOURCES = {
    "storycloze": SourceTerms(STORY_CLOZE_TERMS, "Story Cloze Test (ROCStories), distributed by its authors under their "
                              "terms of use; check them before redistributing the stories.", "mostafazadeh2016"),
    "xstorycloze": SourceTerms(LicenceConfig(id="cc-by-sa-4.0"), "XStoryCloze (professional translations of the Story "
                               "Cloze Test), CC BY-SA 4.0.", "lin2022"),
    "cmmlu": SourceTerms(LicenceConfig(id="cc-by-nc-4.0"), "CMMLU questions (rewritten into statements for sCMMLU), "
                         "CC BY-NC 4.0.", "li2023cmmlu"),
    "jcommonsenseqa": SourceTerms(LicenceConfig(id="cc-by-sa-4.0"), "JCommonsenseQA v1.3 (JGLUE) questions and answers, "
                                  "CC BY-SA 4.0: the spoken set is shared under the same licence.", "kurihara2022jglue"),
    "s2sbench-release": SourceTerms(UNKNOWN, "Items of the published S2SBench release, under the terms of the "
                                    "sources it was made from (Story Cloze Test, CMMLU).", "s2sbench"),
}
DEMO_SOURCE = SourceTerms(LicenceConfig(id="apache-2.0"), "Demo items written for s2sbench, under the s2sbench licence (Apache-2.0).")

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
    "kurihara2022jglue": """@inproceedings{kurihara2022jglue,
  title     = {JGLUE: Japanese General Language Understanding Evaluation},
  author    = {Kurihara, Kentaro and Kawahara, Daisuke and Shibata, Tomohide},
  booktitle = {Proceedings of LREC},
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
    """One config of the Hub dataset: the rows of one task (spoken by ``voices``) in one split."""

    name: str
    task: str
    voices: tuple[str, ...]
    split: str
    num_rows: int
    num_bytes: int  # the Arrow table's bytes, audio included (datasets' SplitInfo.num_bytes)
    download_size: int  # the bytes of its parquet files
    files: tuple[str, ...]  # paths in the repo
    default: bool = False


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
        from s2sbench.pipeline.items.task_config import TaskConfigError
        from s2sbench.pipeline.catalog.tasks import load_task

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
        from s2sbench.pipeline.catalog.voices import load_voices

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


def source_terms(task: TaskFacts) -> SourceTerms:
    """The licence and terms of a task's source: its task file's ``source.licence``, else the loader's known one."""
    if task.source is None:
        return SourceTerms(UNKNOWN, "Items imported from the original S2SBench layout; their licence is that of their source.")
    known = DEMO_SOURCE if task.source.loader == "jsonl" and str(task.source.path or "").startswith("demo/") else \
        SOURCES.get(task.source.loader, SourceTerms(UNKNOWN, f"Items from the '{task.source.loader}' loader."))
    if task.source.licence is None:
        return known
    return SourceTerms(task.source.licence, f"Items from the '{task.source.loader}' loader, under the licence its task "
                       "file names.", known.citation)  # fmt: skip


def card_licences(terms: list[SourceTerms], override: str | None = None) -> dict:
    """The card's licence fields: ``license`` (one id, or one per source) and, for an ``other`` licence,
    ``license_name`` and ``license_link`` (the Hub has one pair: sources under several other licences are named
    together, with a link to the card's list of sources)."""
    if override:
        return {"license": override}
    ids = list(dict.fromkeys(term.licence.id for term in terms)) or [UNKNOWN.id]
    fields: dict = {"license": ids[0] if len(ids) == 1 else ids}
    others = list(dict.fromkeys((t.licence.name, t.licence.link) for t in terms if t.licence.id == "other"))
    if len(others) == 1:
        fields["license_name"], fields["license_link"] = others[0]
    elif others:
        fields["license_name"] = "-and-".join(name for name, _ in others)
        fields["license_link"] = "README.md#sources"
    return fields


def error_rate_rows(checks: list[ClipCheck]) -> list[dict]:
    """Per metric over every attempt: count, mean, median, 90th percentile and maximum of the error rate."""
    import numpy as np

    rows = []
    for metric in sorted({check.metric for check in checks if check.error_rate is not None}):
        rates = np.array([check.error_rate for check in checks if check.metric == metric and check.error_rate is not None])
        rows.append({"metric": metric.upper(), "n": len(rates), "mean": rates.mean(), "median": float(np.median(rates)),
                     "p90": float(np.quantile(rates, 0.9, method="lower")), "max": rates.max()})  # fmt: skip
    return rows


def card_data(build: BuildDescription, configs: list[HubConfig], features, licence: str | None = None):
    """The card's YAML header as ``huggingface_hub.DatasetCardData``: configs (default marked) with their data files,
    features, rows and sizes; languages; a licence per source; task and size categories."""
    from s2sbench.pipeline.buildfolder.configs import ConfigEntry, SplitEntry, index_card_data

    used = sorted({c.task for c in configs})
    entries = [ConfigEntry(name=c.name, default=c.default, splits=[SplitEntry(
        name=c.split, path=f"{c.name}/{c.split}-*.parquet", num_rows=c.num_rows, num_bytes=c.num_bytes,
        download_size=c.download_size)]) for c in configs]  # fmt: skip
    return index_card_data(
        entries, features, language=sorted({build.task(task).language for task in used}) or None,
        **card_licences([source_terms(build.task(task)) for task in used], licence),
        task_categories=["multiple-choice"], size_categories=[size_category(sum(c.num_rows for c in configs))],
        pretty_name=f"s2sbench build ({', '.join(used)})",
        tags=["audio", "speech", "spoken-language-understanding", "speech-llm", "s2sbench"],
    )  # fmt: skip


def render_card(build: BuildDescription, configs: list[HubConfig], features, repo_id: str, licence: str | None = None) -> str:
    """The README.md of the Hub repo: :func:`card_data` as its header, then how the set was made
    (``dataset_card.md.j2``, rendered by ``huggingface_hub.DatasetCard.from_template``)."""
    from huggingface_hub import DatasetCard

    used = sorted({c.task for c in configs})
    terms = {task: source_terms(build.task(task)) for task in used}
    checks = build.checks
    default = next((c for c in configs if c.default), None)
    card = DatasetCard.from_template(
        card_data(build, configs, features, licence), template_path=str(TEMPLATE), repo_id=repo_id, configs=configs,
        default=default, total_rows=sum(c.num_rows for c in configs),
        sources=[{"task": task, "facts": build.task(task), "terms": terms[task],
                  "where": (build.task(task).source.hub_id or build.task(task).source.path if build.task(task).source else None)
                  or "(not recorded)"} for task in used],
        voices=[(voice, build.voices.get(voice, {})) for voice in sorted({v for c in configs for v in c.voices})],
        engines=sorted((engine, sorted(versions)) for engine, versions in build.engines.items()),
        normalization=build.report.normalization.describe(), clips=build.clips, clips_rewritten=build.clips_rewritten,
        gates=[(task, build.task(task).gate) for task in used],
        attempts=len(checks), rejected=sum(c.status == "rejected" for c in checks),
        unverified=sum(c.status == "unverified" for c in checks),
        kept_on_reference=sum(c.kept_on_reference for c in checks), error_rates=error_rate_rows(checks),
        drops=[(task, code, count, build.drop_examples[(task, code)])
               for (task, code), count in sorted(build.drops.items()) if task in used],
        subject_losses=[(task, build.report.tasks[task]) for task in used
                        if task in build.report.tasks and build.report.tasks[task].by_subject],
        conditions=[(task, name, config_name(task, condition=name), summary) for task in used
                    if task in build.report.tasks for name, summary in build.report.tasks[task].conditions.items()],
        citations=[CITATIONS["s2sbench"]] + [CITATIONS[key] for key in sorted({t.citation for t in terms.values() if t.citation})],
    )  # fmt: skip
    return str(card)
