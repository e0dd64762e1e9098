"""The configs of a dataset and the YAML index that declares them, as the Hugging Face Hub reads it.

A config holds one task (or one task and voice, when the task file sets ``config_per_voice: true``), clean or under
one of its acoustic conditions (``<task>-<condition>``), in the task's split (``test`` unless its source has another, such as CMMLU's ``dev``). A build's ``dataset/`` folder and its Hub
repo carry the same index: a dataset card header (``configs`` with their ``data_files`` and the default config,
``dataset_info`` with the features, row counts and sizes), so ``datasets.load_dataset(folder or repo, config,
split=...)`` reads either, and evaluation reads a build, a Hub copy and a saved folder through the same index.
"""

from __future__ import annotations

from pathlib import Path

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.records import Record, safe_component

DEFAULT_SPLIT = "test"
CARD_FILE = "README.md"


class ConfigIndexError(DataError):
    """A dataset card whose header does not declare usable configs; the message names the card and the field."""


def config_name(task: str, voice: str | None = None, condition: str | None = None) -> str:
    """The config (and its folder) of a task, or of a task and one of its voices; under an acoustic condition,
    ``<task>-<condition>`` (and ``--<voice>`` after it)."""
    safe_component(task, "dataset column 'task'")
    name = task if condition is None else f"{task}-{safe_component(condition, 'condition name')}"
    return name if voice is None else f"{name}--{safe_component(voice, 'dataset column voice')}"


def config_condition(config: str, task: str) -> str | None:
    """The acoustic condition of a config holding rows of ``task`` (None: the clean clips), from its name."""
    head = config.partition("--")[0]
    if head == task or not head.startswith(f"{task}-"):
        return None
    return head[len(task) + 1 :]


class SplitEntry(Record):
    """One split of a config: where its files are (a ``data_files`` glob relative to the folder or repo) and its
    size as ``datasets`` records it (``num_bytes``: the Arrow table's bytes, audio included)."""

    name: str
    path: str
    num_rows: int | None = None
    num_bytes: int | None = None
    download_size: int | None = None  # bytes of its data files


class ConfigEntry(Record):
    name: str
    default: bool = False
    splits: list[SplitEntry]

    def split(self, wanted: str | None, where: str) -> SplitEntry:
        """The split to evaluate: ``wanted``, else ``test``, else the config's only split."""
        by_name = {split.name: split for split in self.splits}
        if wanted is not None:
            if wanted not in by_name:
                raise ConfigIndexError(f"{where}: config '{self.name}' has no split '{wanted}' (it has: {', '.join(by_name)})")
            return by_name[wanted]
        if DEFAULT_SPLIT in by_name:
            return by_name[DEFAULT_SPLIT]
        if len(by_name) == 1:
            return self.splits[0]
        raise ConfigIndexError(f"{where}: config '{self.name}' has splits {', '.join(by_name)} and none is "
                               f"'{DEFAULT_SPLIT}'; choose one (--split)")  # fmt: skip


def index_card_data(configs: list[ConfigEntry], features, **metadata):
    """The ``DatasetCardData`` of ``configs`` (all with ``features``): the ``configs`` list with the default marked,
    and ``dataset_info`` per config; ``metadata`` adds card fields (licence, languages, ...)."""
    import datasets
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    if sum(config.default for config in configs) != 1:
        raise ConfigIndexError(f"exactly one config must be the default, not {[c.name for c in configs if c.default]}")
    card_data = DatasetCardData(
        configs=[{"config_name": config.name, "data_files": [{"split": s.name, "path": s.path} for s in config.splits],
                  **({"default": True} if config.default else {})} for config in configs],
        **metadata,
    )  # fmt: skip
    infos = DatasetInfosDict({
        config.name: datasets.DatasetInfo(
            config_name=config.name, features=features,
            splits=datasets.SplitDict({s.name: datasets.SplitInfo(name=s.name, num_bytes=s.num_bytes or 0,
                                                                  num_examples=s.num_rows or 0) for s in config.splits}),
            dataset_size=sum(s.num_bytes or 0 for s in config.splits),
            download_size=sum(s.download_size for s in config.splits) if all(s.download_size for s in config.splits) else None,
        ) for config in configs
    })  # fmt: skip
    infos.to_dataset_card_data(card_data)
    return card_data


def read_index(card_data, where: str) -> list[ConfigEntry]:
    """The configs a card's header declares (``configs``, sizes from ``dataset_info``); the default is the one
    marked, else the config named ``default``, else the first (``datasets``' own rule)."""
    declared = card_data.to_dict().get("configs") or []
    if not isinstance(declared, list) or not declared:
        raise ConfigIndexError(f"{where}: the card's header declares no 'configs'; was this dataset made by s2sbench?")
    infos = card_data.to_dict().get("dataset_info") or []
    infos = {info.get("config_name", "default"): info for info in (infos if isinstance(infos, list) else [infos])}
    configs = []
    for number, entry in enumerate(declared):
        name = entry.get("config_name") if isinstance(entry, dict) else None
        files = entry.get("data_files") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not isinstance(files, list) or not files:
            raise ConfigIndexError(f"{where}: field 'configs[{number}]': needs 'config_name' and a list of 'data_files'")
        sizes = {split.get("name"): split for split in infos.get(name, {}).get("splits", [])}
        splits = []
        for spec in files:
            if not isinstance(spec, dict) or not isinstance(spec.get("split"), str) or "path" not in spec:
                raise ConfigIndexError(f"{where}: config '{name}': each of 'data_files' needs a 'split' and a 'path'")
            size = sizes.get(spec["split"], {})
            path = spec["path"] if isinstance(spec["path"], str) else spec["path"][0]
            splits.append(SplitEntry(name=spec["split"], path=path, num_rows=size.get("num_examples"),
                                     num_bytes=size.get("num_bytes")))  # fmt: skip
        configs.append(ConfigEntry(name=name, default=bool(entry.get("default")), splits=splits))
    if not any(config.default for config in configs):
        fallback = next((config for config in configs if config.name == "default"), configs[0])
        configs = [config.model_copy(update={"default": config is fallback}) for config in configs]
    return configs


def read_card_index(folder: str | Path) -> list[ConfigEntry]:
    """The configs declared by the card ``README.md`` in ``folder`` (a build's ``dataset/``, a staged Hub repo)."""
    from huggingface_hub import DatasetCard

    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise ConfigIndexError(f"{path}: not found; a dataset folder declares its configs in its {CARD_FILE}")
    return read_index(DatasetCard.load(path).data, str(path))


FOLDER_CARD = """---
{{ card_data }}
---

# The dataset of an s2sbench build

One config per task (or per task and voice), each saved with `datasets` (`load_from_disk("<config>")`); this header
declares them, so `datasets.load_dataset("<this folder>", "<config>", split="<split>")` reads one as from the Hub.
`s2sbench eval --dataset` takes this folder, its build folder or the build's Hub repo.
"""


def saved_config_entry(folder: Path, name: str, default: bool) -> ConfigEntry:
    """The index entry of a config saved with ``save_to_disk`` in ``folder / name``: its splits' Arrow files, rows
    and bytes as ``datasets`` counts them."""
    import datasets

    splits = datasets.load_from_disk(str(folder / name))
    return ConfigEntry(name=name, default=default, splits=[
        SplitEntry(name=split, path=f"{name}/{split}/data-*.arrow", num_rows=len(table), num_bytes=table.data.nbytes,
                   download_size=sum(p.stat().st_size for p in (folder / name / split).glob("data-*.arrow")))
        for split, table in splits.items()
    ])  # fmt: skip


def write_folder_index(folder: Path, names: list[str], default: str | None) -> list[ConfigEntry]:
    """Write the ``README.md`` index of the configs saved in ``folder`` (a build's ``dataset/``)."""
    from huggingface_hub import DatasetCard

    from s2sbench.pipeline.buildfolder.dataset import dataset_features

    entries = [saved_config_entry(folder, name, name == default) for name in names]
    if entries:
        DatasetCard.from_template(index_card_data(entries, dataset_features()), template_str=FOLDER_CARD).save(folder / CARD_FILE)
    return entries
