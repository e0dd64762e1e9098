"""Clips are checked by their hash whenever they are read from the clip store: a truncated or zeroed WAV is made
again (identical, the engines are seeded) and the build says so, instead of being embedded under the old sha256."""

from __future__ import annotations

import hashlib
import shutil

from tests.real_build import STORY_TASK
from s2sbench.pipeline.speech.audio import ClipStore
from s2sbench.pipeline.run.build import run_build
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.buildfolder.dataset import iter_rows, undecoded
from s2sbench.pipeline.catalog.tasks import load_task


def test_damaged_clips_are_made_again_and_reported(real_build, tmp_path):
    copy, store_copy = tmp_path / "build", tmp_path / "clips"
    shutil.copytree(real_build.root, copy)
    shutil.copytree(real_build.store, store_copy)
    rows = BuildDir(copy).read_manifest()
    truncated, zeroed = rows[0].clips["context"], rows[1].clips["candidate:1"]
    store = ClipStore(store_copy)
    for clip, damage in ((truncated, lambda data: data[: len(data) // 3]), (zeroed, lambda data: bytes(len(data)))):
        path = store.abspath(store.audio_path(clip.audio_sha256))
        path.write_bytes(damage(path.read_bytes()))
    assert store.lookup(truncated.key) is None  # a damaged clip is never served from the store

    report = run_build([load_task(path) for path in real_build.task_files], copy, shard_size=2, store_root=store_copy)

    assert sorted(report.integrity.clips_remade) == sorted([f"{rows[0].id} context: damaged in the store, made again",
                                                           f"{rows[1].id} candidate:1: damaged in the store, made again"])
    assert report.integrity.clips_checked == sum(len(row.clips) for row in rows)
    for clip in (truncated, zeroed):  # the same audio as the gate checked, back in the store
        assert hashlib.sha256(store.read_bytes(store.audio_path(clip.audio_sha256))).hexdigest() == clip.audio_sha256
    build = BuildDir(copy)
    manifest = {row.id: row for row in build.read_manifest()}
    split = build.load_dataset()[STORY_TASK]["test"]
    for _, row in iter_rows(undecoded(split), "split"):  # every embedded clip is the one the manifest names
        clips = manifest[row.id].clips
        assert hashlib.sha256(row.context_audio.wav).hexdigest() == clips["context"].audio_sha256
        assert [hashlib.sha256(a.wav).hexdigest() for a in row.candidate_audio] == [
            clips[f"candidate:{k}"].audio_sha256 for k in range(len(row.candidates))]
