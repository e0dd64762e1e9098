"""The ``publish`` flow: stage a build as a Hub dataset repo, upload it, load it back and compare."""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact

from s2sbench.pipeline.publish.hub import PublishError, RetryPolicy, stage_repo, upload_repo, verify_upload


@task(name="stage-repo")
def stage_task(build_dir: Path, folder: Path, repo_id: str, licence: str | None):
    return stage_repo(build_dir, folder, repo_id, licence=licence)


# upload_repo retries transient HTTP errors itself and resumes by content hash, so no Prefect retries are stacked on it
@task(name="upload-repo")
def upload_task(folder: Path, repo_id: str, revision: str, private: bool, attempts: int):
    return upload_repo(folder, repo_id, revision=revision, private=private, policy=RetryPolicy(attempts=attempts))


@task(name="verify-upload")
def verify_task(staged, repo_id: str, revision: str):
    return verify_upload(staged, repo_id, revision=revision)


@flow(name="publish")
def publish_flow(build_dir: str, repo_id: str, revision: str = "main", private: bool = False,
                 licence: str | None = None, attempts: int = 5) -> dict:
    """Publish the build in ``build_dir`` to ``repo_id`` on the Hub at ``HF_ENDPOINT`` (token from ``HF_TOKEN``)."""
    with tempfile.TemporaryDirectory(prefix="s2sbench-publish-") as scratch:
        staged = stage_task(Path(build_dir), Path(scratch) / "repo", repo_id, licence)
        upload = upload_task(staged.folder, repo_id, revision, private, attempts)
        checks = verify_task(staged, repo_id, revision)
    lines = ["| config | rows expected | rows found | audio mismatches |", "|---|---|---|---|"]
    lines += [f"| {c.config} | {c.rows_expected} | {c.rows_found} | {c.audio_mismatches} |" for c in checks]
    create_markdown_artifact(markdown="\n".join(lines), key="publish-check", description=f"{repo_id}@{revision}")
    bad = [check.config for check in checks if not check.ok]
    if bad:
        raise PublishError(f"{repo_id}@{revision}: loaded-back data differs from the build for {', '.join(bad)}")
    return {"repo_id": repo_id, "revision": revision, "commits": upload.commits, "uploaded": len(upload.uploaded),
            "skipped": len(upload.skipped), "configs": [check.config for check in checks]}
