"""``s2sbench publish``: put a build on the Hugging Face Hub (or stage the exact folder with ``--dry-run``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from s2sbench.flows.commands import add_command, positive_int

NEW_FOLDER = Path("<a new folder>")  # --dry-run without OUT: a new temporary folder, printed (never inside the build)

EXAMPLES = """examples:
  s2sbench publish build/ --repo-id my-org/sstorycloze-demo --dry-run            # stages into a new folder it prints
  s2sbench publish build/ --repo-id my-org/sstorycloze-demo --dry-run staged/    # again: staged/ is replaced
  HF_TOKEN=hf_... s2sbench publish build/ --repo-id my-org/sstorycloze-demo --private
  HF_TOKEN=hf_... s2sbench publish build/ --repo-id my-org/sstorycloze-demo --revision v2

The token is read from HF_TOKEN (or a stored `hf auth login`) and never printed. HF_ENDPOINT selects another Hub.
Re-running after a failure resumes: files already on the Hub with the same content are skipped.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "publish",
        help="upload a build to the Hugging Face Hub and check it loads back",
        description="Upload a build as a Hub dataset (the build's configs, a task each or a task and voice each, in "
        "the task's split; parquet with embedded audio; a generated dataset card with the default config, a licence "
        "per source and true sizes), then load it back and compare row counts and audio hashes.",
        epilog=EXAMPLES,
    )
    parser.add_argument("build", type=Path, metavar="DIR", help="build directory (from `s2sbench build`)")
    parser.add_argument("--repo-id", required=True, help="dataset repo, ORG/NAME")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.add_argument("--revision", default="main", help="branch to commit to (created from main if missing)")
    parser.add_argument("--dry-run", type=Path, nargs="?", const=NEW_FOLDER, metavar="OUT",
                        help="write the folder that would be uploaded to OUT (new, empty, or staged before: it is "
                        "replaced), or to a new temporary folder it prints; upload nothing (the repo id is checked)")
    parser.add_argument("--license", help="one Hub licence id for the card (default: one per source, from the task "
                        "files' source.licence or the loaders' known licences)")
    parser.add_argument("--default-config", metavar="NAME", help="the config `load_dataset(repo)` opens (default: "
                        "the build's, its first task)")
    parser.add_argument("--attempts", type=positive_int, default=5, help="tries per step on transient HTTP errors (default 5)")
    parser.add_argument("--no-verify", action="store_true", help="skip loading the dataset back after the upload")
    parser.set_defaults(handler=run, runs_flow=True)


def run(args: argparse.Namespace) -> int:
    import tempfile

    from s2sbench.flows.commands import CommandError
    from s2sbench.flows.publish import NoTokenError, publish_flow
    from s2sbench.pipeline.publish.hub import PublishError, check_repo_id

    check_repo_id(args.repo_id)  # before a Prefect server starts
    dry_run = Path(tempfile.mkdtemp(prefix="s2sbench-hub-repo-")) if args.dry_run is NEW_FOLDER else args.dry_run
    try:
        result = publish_flow(
            build_dir=str(args.build), repo_id=args.repo_id, revision=args.revision, private=args.private,
            dry_run_dir=str(dry_run) if dry_run is not None else None, licence=args.license,
            default_config=args.default_config, attempts=args.attempts,
            verify=not args.no_verify,
        )
    except PublishError as error:
        hint = "" if dry_run is not None or isinstance(error, NoTokenError) else " (re-run the same command to resume)"
        raise CommandError(f"{error}{hint}") from error
    for config in result.configs:
        print(f"{config.name}{' (default)' if config.default else ''}: {config.num_rows} rows ({config.split}), "
              f"{len(config.files)} file(s)")
    if result.staged_dir is not None:
        print(f"dry run: the repo folder is in {result.staged_dir}")
        return 0
    upload = result.upload
    print(f"{args.repo_id}@{args.revision}: {upload.commits} commit(s), {len(upload.uploaded)} file(s) uploaded, "
          f"{len(upload.skipped)} already there, {len(upload.deleted)} stale removed")
    for check in result.checks:
        print(f"  loaded back {check.config}: {check.rows_found}/{check.rows_expected} rows, audio hashes match")
    return 0
