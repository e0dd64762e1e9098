"""The voice registry: ``data/voices/*.yaml`` plus any files or folders listed in ``$S2SBENCH_VOICES``.

Each file is a YAML list of voices (see :class:`~s2sbench.pipeline.speech.tts.base.Voice`): id, engine, language, model,
speaker (a speaker id or a reference recording), options, licence of the weights. A relative ``model`` or
``speaker`` that exists beside the YAML file is resolved against it, so a voice folder can ship its own files.
"""

from __future__ import annotations

import os
from pathlib import Path

from s2sbench.data import DATA_DIR
from s2sbench.pipeline.core.errors import ConfigError, unknown_name
from s2sbench.pipeline.core.manifest import load_yaml
from s2sbench.pipeline.core.schema import validate
from s2sbench.pipeline.speech.tts import ENGINES
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.speech.tts.base import Voice
from s2sbench.pipeline.text.languages import base_language

VOICES_DIR = DATA_DIR / "voices"
VOICES_ENV = "S2SBENCH_VOICES"


class VoiceConfigError(ConfigError):
    """A voice file that cannot be used; the message names the file, the entry and the key."""


def default_voice_files() -> list[Path]:
    files = sorted(VOICES_DIR.glob("*.yaml"))
    for entry in filter(None, os.environ.get(VOICES_ENV, "").split(os.pathsep)):
        path = Path(entry).expanduser()
        files += sorted(path.glob("*.yaml")) if path.is_dir() else [path]
    return files


def _resolve(value: str | None, base: Path) -> str | None:
    if not value or Path(value).is_absolute() or not (base / value).exists():
        return value
    return str((base / value).resolve())


def _read_file(path: Path) -> list[Voice]:
    raw = load_yaml(path, VoiceConfigError)
    if not isinstance(raw, list):
        raise VoiceConfigError(f"{path}: expected a list of voices at the top level")
    voices = []
    for index, entry in enumerate(raw):
        where = f"{path}: voice {index}" + (f" ('{entry['id']}')" if isinstance(entry, dict) and "id" in entry else "")
        if not isinstance(entry, dict):
            raise VoiceConfigError(f"{where}: expected a mapping")
        voice = validate(Voice, entry, where, VoiceConfigError)
        engine = ENGINES.get(voice.engine, f"{where}: key 'engine'")
        if engine.Options is not None:
            validate(engine.Options, voice.options, where, VoiceConfigError, prefix="options")
        voices.append(voice.model_copy(update={
            "model": _resolve(voice.model, path.parent), "speaker": _resolve(voice.speaker, path.parent),
        }))
    return voices


def load_voices(paths: list[Path] | None = None) -> dict[str, Voice]:
    """All voices of ``paths`` (default: the shipped registry plus ``$S2SBENCH_VOICES``) by id; ids are unique."""
    voices: dict[str, Voice] = {}
    origin: dict[str, Path] = {}
    for path in default_voice_files() if paths is None else [Path(p) for p in paths]:
        for voice in _read_file(path):
            if voice.id in voices:
                raise VoiceConfigError(f"{path}: voice id '{voice.id}' is already defined in {origin[voice.id]}")
            voices[voice.id], origin[voice.id] = voice, path
    return voices


def check_task_voices(task: TaskConfig, paths: list[Path] | None = None) -> list[Voice]:
    """The voices of ``task``, each checked to speak the task's language with an engine that reads it: a Mandarin voice
    in an English task, or a voice whose engine cannot read its language, is refused before any clip is made."""
    where = f"{task.path or task.name}: key 'voices'"
    voices = [get_voice(voice_id, paths, where) for voice_id in task.voices]
    for voice in voices:
        spoken = base_language(voice.language)
        if spoken != base_language(task.language):
            raise VoiceConfigError(f"{where}: voice '{voice.id}' speaks {voice.language}, task {task.name} is in "
                                   f"{task.language}; list voices of {task.language} (s2sbench voices)")
        readable = ENGINES.get(voice.engine).languages
        if readable is not None and spoken not in readable:
            raise VoiceConfigError(f"{where}: voice '{voice.id}' is {voice.language}, but its engine {voice.engine} reads "
                                   f"only {', '.join(sorted(readable))}")
    return voices


def get_voice(voice_id: str, paths: list[Path] | None = None, where: str = "") -> Voice:
    """The voice ``voice_id``; ``where`` (a task file's key) prefixes the error of an unknown one."""
    voices = load_voices(paths)
    if voice_id not in voices:
        prefix = f"{where}: " if where else ""
        raise VoiceConfigError(prefix + unknown_name("voice", voice_id, sorted(voices),
                                                     f"; voices are defined in {VOICES_DIR} and ${VOICES_ENV}"))
    return voices[voice_id]
