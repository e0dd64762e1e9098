"""``s2sbench voices``: list the voice registry; ``--check`` speaks a few sentences in each voice and has a judge say
what it heard (:mod:`s2sbench.pipeline.speech.voice_check`)."""

from __future__ import annotations

import argparse
import sys

from s2sbench.flows.commands import add_command

EXAMPLES = """examples:
  s2sbench voices
  s2sbench voices --check
  s2sbench voices --check --voice piper-en-joe --voice espeak-zh-pinyin
  s2sbench voices --check --voice kokoro-ja-alpha   # does it read Japanese? the judge's transcripts and KER
  s2sbench voices --check --out voice-samples/      # keep each sentence as <voice>-N.wav to listen to
  s2sbench voices --file my_voices.yaml --check --allow-download
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "voices",
        help="list the voices; check that each reads its language as a judge hears it",
        description="List the voice registry (data/voices/*.yaml and $S2SBENCH_VOICES); with --check, speak a few "
        "sentences in each voice's language, print what the judge (Whisper tiny.en for English, the multilingual "
        "Whisper base otherwise) heard with the error rate per sentence and overall, and the real-time factor.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--file", action="append", default=None, metavar="YAML",
                        help="voice file(s) to use instead of the registry (repeatable)")
    parser.add_argument("--voice", action="append", default=None, metavar="ID", help="only these voices (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="speak a few sentences in each voice's language and print what a Whisper judge heard, with "
                        "the error rate per sentence and overall (the gate's metric for the language)")
    parser.add_argument("--no-judge", action="store_true", help="with --check: synthesize only, no judge")
    parser.add_argument("--allow-download", action="store_true",
                        help="also check voices whose model is not on this machine yet (the engine may download it)")
    parser.add_argument("--out", metavar="DIR", help="with --check: write each sentence to DIR/<voice>-N.wav")
    parser.set_defaults(handler=run)


def _check(voice, allow_download: bool, out_dir: str | None, judge: bool) -> tuple[str, list[str]]:
    """(status, lines) of one voice: ok (with what the judge heard), missing, or FAILED with the reason."""
    from s2sbench.pipeline.core.manifest import atomic_write_bytes
    from s2sbench.pipeline.gate.asr import ASRLoadError, TranscriptionError
    from s2sbench.pipeline.speech.audio import AudioSettings, wav_bytes
    from s2sbench.pipeline.speech.tts import get_engine
    from s2sbench.pipeline.speech.tts.base import SynthesisError
    from s2sbench.pipeline.speech.voice_check import PASS_RATE, check_voice, judge_for

    missing = get_engine(voice.engine).missing(voice)
    if missing and not allow_download:
        return "missing", [missing]
    try:
        check = check_voice(voice, judge_for(voice.language) if judge else None)
    except SynthesisError as error:
        return "FAILED", [str(error)]
    except (ASRLoadError, TranscriptionError) as error:
        return "FAILED", [f"the judge failed: {error}"]
    lines = [f"{check.speech_s:.2f} s of speech in {len(check.clips)} sentences, real-time factor "
             f"{check.real_time_factor:.3f}"]
    if out_dir:
        rate = AudioSettings().sample_rate_hz
        for index, clip in enumerate(check.clips):
            atomic_write_bytes(f"{out_dir}/{voice.id}-{index + 1}.wav", wav_bytes(clip, rate))
        lines[0] += f", written to {out_dir}/{voice.id}-N.wav"
    if check.heard:
        lines.append(f"judge {check.judge}, {check.metric.upper()} per sentence (said -> heard):")
        lines += [f"  {sentence.error_rate:.3f}  {sentence.text}  ->  {sentence.transcript}" for sentence in check.heard]
        lines.append(f"{check.metric.upper()} overall {check.overall_error_rate:.3f}; {check.sentences_passed} of "
                     f"{len(check.heard)} sentences at <= {PASS_RATE:g}, where a shipped gate keeps a clip")
    return "ok", lines


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
            status, lines = _check(voice, args.allow_download, args.out, not args.no_judge)
            failed += status == "FAILED"
            print(f"    {status}: {lines[0]}")
            for line in lines[1:]:
                print(f"    {line}")
        sys.stdout.flush()
    if args.check:
        print(f"{len(voices)} voices, {failed} failed")
    return 1 if failed else 0
