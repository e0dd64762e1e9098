"""The Python API and the fail-fast checks: model arguments, modes and data are checked before any model loads."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from tests.evaluation.conftest import ToyAdapter

import s2sbench
from s2sbench.evaluation.models import ModelOptionError
from s2sbench.evaluation.protocol.modes import ModeError
from s2sbench.evaluation.runner.run import Results
from s2sbench.flows.cli import main


@pytest.fixture
def choice_task_file(tmp_path, eval_tasks):
    """The evaluation fixture's choice task (outside the registry) as a task YAML."""
    path = tmp_path / "mc-zh.yaml"
    path.write_text(yaml.safe_dump(eval_tasks["mc-zh"].model_dump(mode="json", exclude={"path"})), encoding="utf-8")
    return path


def test_evaluate_takes_a_datasets_object_or_a_saved_folder_and_returns_typed_results(build_dir, tmp_path, choice_task_file):
    import datasets

    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    config = BuildDir(build_dir).load_dataset()["mc-zh"]
    saved = tmp_path / "saved"
    config.save_to_disk(str(saved))
    common = {"modes": ["T->T"], "task_files": [choice_task_file], "bootstrap": 100}
    by_folder = s2sbench.evaluate(ToyAdapter(), saved, out=tmp_path / "folder", **common)
    by_object = s2sbench.evaluate(ToyAdapter(), config["test"], **common)  # no out: a temporary folder
    assert isinstance(by_folder, Results) and by_folder.file.dataset.kind == "folder"
    assert by_object.file.dataset.kind == "object" and isinstance(config["test"], datasets.Dataset)
    assert by_folder.file.tasks == by_object.file.tasks
    assert by_folder.accuracy("mc-zh", "T->T") == by_folder.file.tasks["mc-zh"].accuracy("T->T").value
    assert (tmp_path / "folder" / "results_lm_eval.json").is_file() and (tmp_path / "folder" / "results.csv").is_file()
    limited = s2sbench.evaluate(ToyAdapter(), build_dir, tasks="demo-stories-en", voices=["voice-b"], limit=2,
                                modes=["S->T"], bootstrap=100)  # fmt: skip
    assert limited.file.tasks["demo-stories-en"].n_items == 2
    assert limited.file.dataset.selection.model_dump() == {"tasks": ["demo-stories-en"], "voices": ["voice-b"], "limit": 2,
                                                           "split": None}  # fmt: skip


def test_an_unknown_model_argument_fails_before_the_model_loads(build_dir, tmp_path, capsys):
    # model=... names no checkpoint: had anything tried to load it, the error would say so
    args = ["eval", "--dataset", str(build_dir), "--model", "hf-causal", "--model-arg", "model=/no/such/checkpoint",
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert main([*args, "--model-arg", "batchsize=8"]) == 2
    err = capsys.readouterr().err
    assert "model 'hf-causal': unknown option 'batchsize'; did you mean 'batch_size'? (options: batch_size: int = 32;" in err
    assert "Traceback" not in err
    assert main([*args, "--model-arg", "batch_size=many"]) == 2
    assert "option 'batch_size': expected int, got 'many'" in capsys.readouterr().err
    assert main(["eval", "--dataset", str(build_dir), "--model", "cascade", "--model-arg", "bach_size=8",
                 "--out", str(tmp_path / "out")]) == 2  # fmt: skip
    assert "did you mean 'batch_size'?" in capsys.readouterr().err  # the cascade's LM options count as its own
    with pytest.raises(ModelOptionError, match="needs option 'model'"):
        s2sbench.evaluate("hf-causal", build_dir, ["T->T"])


def test_a_mode_the_model_cannot_score_fails_before_the_model_loads(build_dir, tmp_path, capsys):
    assert main(["eval", "--dataset", str(build_dir), "--model", "smollm2", "--modes", "S->T",
                 "--out", str(tmp_path / "out")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "model 'smollm2' cannot score S->T: it scores T->T only" in err
    assert not (tmp_path / "out").exists()  # nothing was scored, not even an empty table
    with pytest.raises(ModeError, match="S->S score spoken candidates, and no selected task has them"):
        s2sbench.evaluate("moshi", build_dir, ["T->T", "S->S"], tasks=["mc-zh"])  # its candidates are not spoken


def test_the_dataset_is_checked_before_the_model_loads(tmp_path, capsys):
    args = ["--model", "hf-causal", "--model-arg", "model=/no/such/checkpoint", "--out", str(tmp_path / "out")]
    assert main(["eval", "--dataset", str(tmp_path / "missing"), *args]) == 2
    assert "no such folder, and not a Hub dataset id ORG/NAME[@REVISION]" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["eval", "--dataset", str(tmp_path / "empty"), *args]) == 2
    assert "not a build folder, a dataset folder" in capsys.readouterr().err


def test_version_and_python_dash_m():
    assert s2sbench.__version__ not in ("", "0+unknown")
    out = subprocess.run([sys.executable, "-m", "s2sbench", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"s2sbench {s2sbench.__version__}"
    usage = subprocess.run([sys.executable, "-m", "s2sbench", "eval", "--help"], capture_output=True, text=True, check=True)
    assert "--dataset DIR|ORG/NAME[@REV]" in usage.stdout and "--limit N" in usage.stdout
