"""``s2sbench voices``: list the voice registry and check that each voice can synthesize a test sentence."""

from __future__ import annotations

import argparse
import sys

from s2sbench.flows.commands import add_command

EXAMPLES = """examples:
  s2sbench voices
  s2sbench voices --check
  s2sbench voices --check --voice piper-en-joe --voice espeak-zh-pinyin
  s2sbench voices --check --out voice-samples/      # keep each test sentence as <voice>.wav to listen to
  s2sbench voices --file my_voices.yaml --check --allow-download
"""

# A test sentence per language, with a number and a date so that normalization is exercised too.
TEST_SENTENCES = {
    "en": "On 3 May 2024, the quick brown fox paid $5 to jump over the lazy dog.",
    "zh": "2024年5月3日，小明花了5元买了2个苹果。",
}
FALLBACK_SENTENCE = "1, 2, 3."


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "voices",
        help="list the voices and check that they synthesize",
        description="List the voice registry (data/voices/*.yaml and $S2SBENCH_VOICES); with --check, synthesize a "
        "test sentence with each voice and report its duration and real-time factor.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--file", action="append", default=None, metavar="YAML",
                        help="voice file(s) to use instead of the registry (repeatable)")
    parser.add_argument("--voice", action="append", default=None, metavar="ID", help="only these voices (repeatable)")
    parser.add_argument("--check", action="store_true", help="synthesize a test sentence with each voice")
    parser.add_argument("--allow-download", action="store_true",
                        help="also check voices whose model is not on this machine yet (the engine may download it)")
    parser.add_argument("--out", metavar="DIR", help="with --check: write each voice's test sentence to DIR/<voice>.wav")
    parser.set_defaults(handler=run)


def _check(voice, allow_download: bool, out_dir: str | None) -> tuple[str, str]:
    """(status, detail) of one voice: ok, needs download/missing, or failed with the engine's reason."""
    import time

    from s2sbench.pipeline.speech.audio import AudioSettings, postprocess, wav_bytes
    from s2sbench.pipeline.text.languages import base_language
    from s2sbench.pipeline.core.manifest import atomic_write_bytes
    from s2sbench.pipeline.text.normalize import normalize_for_tts
    from s2sbench.pipeline.speech.tts import get_engine
    from s2sbench.pipeline.speech.tts.base import SynthesisError

    engine = get_engine(voice.engine)
    missing = engine.missing(voice)
    if missing and not allow_download:
        return "missing", missing
    text = normalize_for_tts(TEST_SENTENCES.get(base_language(voice.language), FALLBACK_SENTENCE), voice.language)
    started = time.perf_counter()
    try:
        wave = engine.synthesize(text, voice, seed=0)
        elapsed_s = time.perf_counter() - started
        samples = postprocess(wave, AudioSettings())
    except SynthesisError as error:
        return "FAILED", str(error)
    raw_s = wave.samples.size / wave.sample_rate_hz
    settings = AudioSettings()
    detail = f"{samples.size / settings.sample_rate_hz:.2f} s of speech, real-time factor {elapsed_s / raw_s:.3f}"
    if out_dir:
        path = f"{out_dir}/{voice.id}.wav"
        atomic_write_bytes(path, wav_bytes(samples, settings.sample_rate_hz))
        detail += f", written to {path}"
    return "ok", detail


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from s2sbench.flows.commands import CommandError
    from s2sbench.pipeline.catalog.voices import load_voices

    voices = load_voices([Path(p) for p in args.file] if args.file else None)
    if args.voice:
        unknown = sorted(set(args.voice) - set(voices))
        if unknown:
            raise CommandError(f"unknown voice(s) {', '.join(unknown)} (known: {', '.join(sorted(voices))})")
        voices = {voice_id: voices[voice_id] for voice_id in args.voice}
    failed = 0
    for voice in voices.values():
        print(f"{voice.id}  [{voice.engine}, {voice.language}]  model={voice.model or '-'}"
              + (f"  speaker={voice.speaker}" if voice.speaker else "") + f"  licence: {voice.licence}")
        if args.check:
            status, detail = _check(voice, args.allow_download, args.out)
            failed += status == "FAILED"
            print(f"    {status}: {detail}")
        sys.stdout.flush()
    if args.check:
        print(f"{len(voices)} voices, {failed} failed")
    return 1 if failed else 0
