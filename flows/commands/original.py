"""``s2sbench export-original`` / ``import-original``: the JSONL + wav layout of the original S2SBench release."""

from __future__ import annotations

import argparse
from pathlib import Path

from s2sbench.flows.commands import add_command

EXPORT_EXAMPLES = """examples:
  s2sbench export-original build/ --out s2s-original/

Then run the original S2SBench code (github undobug/S2SBench) unchanged, from its s2t/ (or t2t/) folder; the export
prints the --dataset_list of each config file (choice sets are scored under the one name cmmlu_write_4):
  python s2t_infer_ppl.py --config s2s-original/eval_s2t.yaml --root_dir s2s-original/ \\
      --dataset_list demo-stories-en--piper-en-joe cmmlu_write_4 --checkpoint 'ckpts/ckpt_0_1000_*/'
The summary readers take checkpoint folders named ckpt_<n>_<step>_<anything>.
"""
IMPORT_EXAMPLES = """examples:
  s2sbench import-original s2s-original/ --out imported/          # an export-original folder (restores it exactly)
  s2sbench import-original S2S/StoryCloze/sStory_s2t.jsonl --audio-dir S2S/StoryCloze/s-story-firstspeech \\
      --task sstorycloze --language en --out imported/            # the published S2SBench files
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    export = add_command(
        subparsers,
        "export-original",
        help="write a build in the original S2SBench layout (JSONL + one wav per row)",
        description="Write each config of a build as <config>.jsonl and <config>/<uttid>.wav: stories as consecutive-id "
        "pairs with the right ending first, choice sets with A-D and answer; plus eval_s2t.yaml for the original code.",
        epilog=EXPORT_EXAMPLES,
    )
    export.add_argument("build", type=Path, metavar="DIR", help="build directory (from `s2sbench build`)")
    export.add_argument("--out", required=True, type=Path, help="output folder")
    export.set_defaults(handler=run_export, runs_flow=True)

    imp = add_command(
        subparsers,
        "import-original",
        help="read the original S2SBench layout into items and a dataset s2sbench can evaluate",
        description="Read original-layout sets (an export-original folder, a folder with eval_s2t.yaml, or one JSONL "
        "with --audio-dir) into items/<task>.jsonl and dataset/ like a build's (audio marked unverified).",
        epilog=IMPORT_EXAMPLES,
    )
    imp.add_argument("source", type=Path, metavar="SOURCE", help="export folder, folder with eval_s2t.yaml, or a JSONL file")
    imp.add_argument("--out", required=True, type=Path, help="output folder")
    imp.add_argument("--audio-dir", type=Path, help="wav folder of a single JSONL file")
    imp.add_argument("--task", help="task name for a single JSONL file (default: the file name)")
    imp.add_argument("--language", help="language of a single JSONL file (en, zh, ...)")
    imp.set_defaults(handler=run_import, runs_flow=True)


def run_export(args: argparse.Namespace) -> int:
    from s2sbench.flows.original import export_original_flow

    exported = export_original_flow(build_dir=str(args.build), out_dir=str(args.out))
    for entry in exported:
        print(f"{entry.name}: {entry.items} items, {entry.rows} rows ({entry.format}), in {entry.config_file} as {entry.original_name}")
    print(f"original layout in {args.out}; run the original code with each config file:")
    for config_file in dict.fromkeys(entry.config_file for entry in exported):
        names = " ".join(entry.original_name for entry in exported if entry.config_file == config_file)
        print(f"  python s2t_infer_ppl.py --config {args.out / config_file} --root_dir {args.out} --dataset_list {names} "
              "--checkpoint 'CKPT_DIR/ckpt_0_<step>_<name>/'")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from s2sbench.flows.original import import_original_flow

    counts = import_original_flow(source=str(args.source), out_dir=str(args.out), task=args.task,
                                  language=args.language, audio_dir=str(args.audio_dir) if args.audio_dir else None)  # fmt: skip
    for task, rows in counts.items():
        print(f"{task}: {rows} rows")
    print(f"items: {args.out / 'items'}   dataset: {args.out / 'dataset'}")
    return 0
