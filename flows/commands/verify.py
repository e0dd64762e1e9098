"""``s2sbench verify``: re-verify an existing build with another ASR model, without re-synthesizing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from s2sbench.flows.commands import add_command, add_device_argument, positive_int

EXAMPLES = """examples:
  s2sbench verify build/
  s2sbench verify build/ --engine openai-whisper --model tiny.en
  s2sbench verify build/ --model large-v3 --device cuda --batch-size 16 --out build/reverify-large
  s2sbench verify build/ --model /models/whisper-small-ct2 --compute-type float32 --store ~/clips
  s2sbench verify build/ --model base --beam-size 5 --batch-size 1   # the independent check of docs/verification.md
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "verify",
        help="re-verify a build's clips with another ASR model and write a new audit",
        description=(
            "Transcribe every kept clip of a build again (for example with a larger Whisper), apply each task's gate, "
            "and write a new audit (verification.jsonl + report.json) beside the build; the build is not changed."
        ),
        epilog=EXAMPLES,
    )
    parser.add_argument("build_dir", type=Path, metavar="DIR", help="a build directory made by `s2sbench build`")
    parser.add_argument("--engine", default="faster-whisper", help="ASR engine: faster-whisper or openai-whisper")
    parser.add_argument("--model", default="tiny.en", help="model name, CTranslate2 directory or .pt checkpoint")
    add_device_argument(parser, "the ASR model's decoding and the signal checks")
    parser.add_argument("--compute-type", help="int8 or float32 on CPU (faster-whisper), float16 on CUDA")
    parser.add_argument("--batch-size", type=positive_int, default=8, help="clips decoded together")
    parser.add_argument("--beam-size", type=positive_int, default=1,
                        help="beam search width (default 1: greedy, as the build's gate decodes)")
    parser.add_argument("--store", type=Path, help="clip store the build used (default: the build's, else $S2SBENCH_CLIP_STORE)")
    parser.add_argument("--out", type=Path, help="where to write the new audit (default: DIR/reverify/<model>)")
    parser.set_defaults(handler=run, runs_flow=True)


def run(args: argparse.Namespace) -> int:
    from s2sbench.flows.verify import verify_flow
    from s2sbench.pipeline.machine.device import choose_device

    report = verify_flow(
        build_dir=str(args.build_dir), engine=args.engine, model=args.model, device=choose_device(args.device),
        compute_type=args.compute_type, batch_size=args.batch_size, store=str(args.store) if args.store else None,
        out_dir=str(args.out) if args.out else None, beam_size=args.beam_size,
    )
    print(f"re-verified {report.clips} clips with {report.asr_model}")
    print(json.dumps({"status": report.verification.overall.status, "status_changes": report.status_changes}, indent=2))
    for group in report.verification.groups:
        rates = group.error_rate
        mean = f"{rates.mean:.3f}" if rates.n else "n/a"
        print(f"  {group.task} [{group.language}] {group.voice}: {group.status}, mean {'/'.join(group.metrics)} {mean}")
    if report.rows_now_rejected:
        print(f"{len(report.rows_now_rejected)} row(s) would now be dropped: {', '.join(report.rows_now_rejected[:10])}")
    audit = Path(report.audit_dir)
    print(f"audit: {audit / 'verification.jsonl'}   report: {audit / 'report.json'}")
    return 0
