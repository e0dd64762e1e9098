"""The ``publish`` flow: stage a build as a Hub dataset repo, upload it, load it back and compare (or, with
``dry_run_dir``, only stage it there). Artifacts: the configs and load-back checks, and a link to the dataset."""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_link_artifact, create_markdown_artifact

from s2sbench.flows.stages import stage, table
from s2sbench.pipeline.publish.hub import (
    PublishError,
    PublishResult,
    RetryPolicy,
    check_repo_id,
    require_match,
    stage_repo,
    upload_repo,
    verify_upload,
)


class NoTokenError(PublishError):
    """No Hugging Face token to upload with."""


@stage("stage-repo", "stage {repo_id} from {build_dir}")
def stage_task(build_dir: Path, folder: Path, repo_id: str, licence: str | None, default_config: str | None):
    return stage_repo(build_dir, folder, repo_id, licence=licence, default_config=default_config)


# upload_repo retries transient HTTP errors itself and resumes by content hash, so no Prefect retries are stacked on it
@stage("upload-repo", "upload {repo_id}@{revision}")
def upload_task(folder: Path, repo_id: str, revision: str, private: bool, attempts: int):
    return upload_repo(folder, repo_id, revision=revision, private=private, policy=RetryPolicy(attempts=attempts))


@stage("verify-upload", "load back {repo_id}@{revision}")
def verify_task(staged, repo_id: str, revision: str):
    return verify_upload(staged, repo_id, revision=revision)


def dataset_url(repo_id: str, revision: str) -> str:
    """The dataset's page on the Hub at ``HF_ENDPOINT``."""
    from huggingface_hub import constants

    return f"{constants.ENDPOINT}/datasets/{repo_id}" + (f"/tree/{revision}" if revision != "main" else "")


def _artifacts(result: PublishResult, repo_id: str, revision: str) -> None:
    checks = {check.config: check for check in result.checks}
    rows = []
    for config in result.configs:
        check = checks.get(config.name)
        found = f"{check.rows_found}, {check.audio_mismatches} audio mismatches" if check else "-"
        rows.append([config.name + (" (default)" if config.default else ""), config.split, config.num_rows,
                     len(config.files), found])
    where = f"staged in {result.staged_dir}" if result.staged_dir is not None else f"{repo_id}@{revision}"
    create_markdown_artifact(markdown=table(["config", "split", "rows", "files", "loaded back"], rows),
                             key="publish-check", description=where)  # fmt: skip
    if result.upload is not None:
        create_link_artifact(link=dataset_url(repo_id, revision), link_text=f"{repo_id}@{revision}", key="hub-dataset",
                             description=f"{result.upload.commits} commit(s), {len(result.upload.uploaded)} file(s) "
                             f"uploaded, {len(result.upload.skipped)} already there")  # fmt: skip


@flow(name="publish", flow_run_name="publish {build_dir} to {repo_id}", persist_result=False)
def publish_flow(build_dir: str, repo_id: str, revision: str = "main", private: bool = False,
                 dry_run_dir: str | None = None, licence: str | None = None, default_config: str | None = None,
                 attempts: int = 5, verify: bool = True) -> PublishResult:  # fmt: skip
    """Publish the build in ``build_dir`` to the dataset ``repo_id`` on the Hub at ``HF_ENDPOINT`` (token from
    ``HF_TOKEN`` or a stored login); ``dry_run_dir``: only stage the repo folder there; ``licence``: one Hub licence
    id for the card (default: one per source); ``default_config``: the config ``load_dataset(repo)`` opens (default:
    the build's); ``verify``: load every config back and compare rows and audio hashes."""
    check_repo_id(repo_id)
    if dry_run_dir is not None:
        staged = stage_task(Path(build_dir), Path(dry_run_dir), repo_id, licence, default_config)
        result = PublishResult(staged.configs, staged_dir=staged.folder)
        _artifacts(result, repo_id, revision)
        return result
    from huggingface_hub import get_token

    if not get_token():
        raise NoTokenError("no Hugging Face token: set HF_TOKEN (or run `hf auth login`), or only stage the repo "
                           "folder (--dry-run OUT)")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="s2sbench-publish-") as scratch:
        staged = stage_task(Path(build_dir), Path(scratch) / "repo", repo_id, licence, default_config)
        result = PublishResult(staged.configs, upload=upload_task(staged.folder, repo_id, revision, private, attempts))
        if verify:
            result.checks = verify_task(staged, repo_id, revision)
    _artifacts(result, repo_id, revision)
    require_match(result.checks, repo_id, revision)
    return result
