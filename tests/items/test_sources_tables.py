import json

import pytest

from tests.items.source_fixtures import write_csv
from s2sbench.pipeline.core.manifest import ManifestError
from s2sbench.pipeline.items.load import load_items, load_task_items
from s2sbench.pipeline.items.sources.xstorycloze import release_file_name


def test_xstorycloze_release_folder_by_language(make_task, tmp_path):
    header = ["story_id", "input_sentence_1", "input_sentence_2", "input_sentence_3", "input_sentence_4",
              "sentence_quiz1", "sentence_quiz2", "answer_right_ending"]
    rows = [["s1", "Ana fue al mercado.", "Compró manzanas.", "Volvió a casa.", "Hizo una tarta.",
             "La tarta estaba rica.", "Ana vendió su casa.", "1"]]
    write_csv(tmp_path / "x" / release_file_name("es", "eval"), header, rows, delimiter="\t")
    task = make_task(language="es", source={"loader": "xstorycloze", "path": str(tmp_path / "x"), "split": "eval"})
    [item] = load_items(task)
    assert item.context == "Ana fue al mercado. Compró manzanas. Volvió a casa. Hizo una tarta."
    assert item.candidates[item.right] == "La tarta estaba rica." and item.language == "es"


def test_xstorycloze_unknown_language_lists_the_known(make_task, tmp_path):
    from s2sbench.pipeline.items.task_config import TaskConfigError

    task = make_task(language="fr", source={"loader": "xstorycloze", "path": str(tmp_path)})
    with pytest.raises(TaskConfigError, match=r"unknown XStoryCloze language 'fr' \(known: en, ru, zh, es"):
        load_items(task)


def test_generic_csv_with_column_mapping_and_letter_labels(make_task, tmp_path):
    path = write_csv(tmp_path / "mc.csv", ["qid", "s1", "s2", "o1", "o2", "o3", "gold"], [
        ["q1", "It rained.", "We stayed in.", "We read books.", "We swam outside.", "We flew away.", "A"],
        ["q2", "It was sunny.", "We went out.", "We stayed in bed.", "We had a picnic.", "We slept.", "B"],
    ])
    options = {"columns": {"id": "qid", "context": ["s1", "s2"], "candidates": ["o1", "o2", "o3"], "right": "gold"},
               "labels": ["A", "B", "C"]}
    items = load_items(make_task(source={"loader": "csv", "path": str(path), "options": options}))
    assert [(item.id, item.right) for item in items] == [("q1", 0), ("q2", 1)]
    assert items[0].context == "It rained. We stayed in."


def test_generic_jsonl_bad_rows(make_task, tmp_path):
    path = tmp_path / "items.jsonl"
    rows = [
        {"id": "a", "context": "x", "candidates": ["y", "z"], "right": 0},
        {"id": "a", "context": "x", "candidates": ["y", "z"], "right": 1},
        {"id": "b", "context": "x", "candidates": ["y", "z"], "right": 2},
        {"id": "c", "context": "", "candidates": ["y", "z"], "right": 0},
        {"id": "d", "context": "x", "candidates": ["y", "z"], "right": 1},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"items.jsonl:2: field 'id': duplicate id 'a' \(first on line 1\)"):
        load_items(make_task(source={"loader": "jsonl", "path": str(path)}))
    result = load_task_items(make_task(source={"loader": "jsonl", "path": str(path), "on_bad_row": "drop"}))
    assert [item.id for item in result.items] == ["a", "d"]
    assert [drop.reason.code for drop in result.drops] == [
        "duplicate id 'a' (first on line 1)", "Value error, right=2 is out of range for 2 candidates", "Value error, empty context"
    ]
    with pytest.raises(ManifestError, match="field 'text': missing column"):
        load_items(make_task(source={"loader": "jsonl", "path": str(path), "options": {"columns": {"context": "text"}}}))


def test_shipped_demo_jsonl_tasks_still_load():
    from s2sbench.pipeline.catalog.tasks import load_task

    assert len(load_items(load_task("demo-stories-en"))) == 14
    assert len(load_items(load_task("demo-stories-zh"), limit=5)) == 5


def test_translate_uses_the_xstorycloze_zh_text_when_it_has_the_story(make_task, tmp_path, spring_csv):
    header = ["story_id", "input_sentence_1", "input_sentence_2", "input_sentence_3", "input_sentence_4",
              "sentence_quiz1", "sentence_quiz2", "answer_right_ending"]
    zh = ["story-0", "玛雅在阁楼找到一个盒子。", "盒子上满是灰尘。", "她小心地打开了它。", "里面是一张旧照片。",
          "她看着照片笑了。", "她把盒子扔进了大海。", "1"]
    write_csv(tmp_path / "x" / release_file_name("zh", "eval"), header, [zh], delimiter="\t")
    task = make_task(language="zh", source={"loader": "storycloze", "path": str(spring_csv)},
                     candidates={"construction": "translate", "options": {"xstorycloze_zh": str(tmp_path / "x")}})
    [item] = load_items(task, limit=1)  # story-0 is in the zh file: no LLM is needed
    assert item.context == "玛雅在阁楼找到一个盒子。盒子上满是灰尘。她小心地打开了它。里面是一张旧照片。"
    assert item.candidates == ["她看着照片笑了。", "她把盒子扔进了大海。"] and item.right == 0
    assert item.meta["translation"] == "xstorycloze" and item.meta["english"]["candidates"][0].startswith("Maya smiled")


def test_llm_settings_errors(make_task, tmp_path):
    from s2sbench.pipeline.core.errors import ConfigError
    from s2sbench.pipeline.items.rewrite.llm import LLMError, OpenAIChat, make_chat

    with pytest.raises(ConfigError, match=r"key 'temprature': unknown key \(known: api_key_env, backend"):
        make_chat({"model": "m", "base_url": "http://x", "temprature": 0})
    with pytest.raises(ConfigError, match="no base_url"):
        make_chat({"model": "m"})
    with pytest.raises(ConfigError, match=r"key 'backend': Input should be 'openai' or 'transformers', got 'vllm'"):
        make_chat({"model": "m", "backend": "vllm"})
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LLMError, match="cannot reach the chat API"):
        OpenAIChat(f"http://127.0.0.1:{port}/v1", "m", timeout_s=5).complete([{"role": "user", "content": "hi"}], 8)
