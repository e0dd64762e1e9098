import json

import pytest

from s2sbench.pipeline.core.manifest import (
    ManifestError,
    ResumableJsonlWriter,
    atomic_write_text,
    read_records,
    stable_hash,
    write_records,
)
from s2sbench.pipeline.core.records import Drop, Item, Reason, Source


def make_item(item_id="s1", right=0):
    return Item(
        id=item_id, task="t", language="en", context="A story.", candidates=["good end", "bad end"], right=right,
        source=Source(file="x.jsonl", row=1),
    )


def test_roundtrip_keeps_chinese_readable(tmp_path):
    item = make_item().model_copy(update={"context": "小明去上学。"})
    path = tmp_path / "items.jsonl"
    write_records(path, [item])
    assert "小明" in path.read_text(encoding="utf-8")
    assert read_records(path, Item) == [item]


@pytest.mark.parametrize(
    "row, field, problem",
    [
        ({"id": "a", "task": "t", "language": "en", "context": "c", "candidates": ["x", "y"], "right": 2,
          "source": {"file": "f", "row": 1}}, "<row>", "out of range"),
        ({"id": "a", "task": "t", "language": "en", "context": "c", "candidates": ["x", ""], "right": 0,
          "source": {"file": "f", "row": 1}}, "candidates", "candidate 1 is empty"),
        ({"id": "a", "task": "t", "language": "en", "context": "c", "right": 0,
          "source": {"file": "f", "row": 1}}, "candidates", "Field required"),
        ({"id": "a", "task": "t", "language": "en", "context": "  ", "candidates": ["x", "y"], "right": 0,
          "source": {"file": "f", "row": 1}}, "context", "empty context"),
    ],
)
def test_bad_row_names_file_line_and_field(tmp_path, row, field, problem):
    path = tmp_path / "items.jsonl"
    good = make_item().model_dump(mode="json")
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(ManifestError) as caught:
        read_records(path, Item)
    assert caught.value.line == 2
    assert caught.value.field == field
    assert problem in str(caught.value)
    assert str(path) in str(caught.value)


def test_invalid_json_and_encoding_are_errors(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a"\n')
    with pytest.raises(ManifestError, match=r"bad.jsonl:1: field '<row>': invalid JSON"):
        read_records(path, Item)
    path.write_bytes('{"context": "café"}\n'.encode("latin-1"))  # a file saved in the wrong encoding
    with pytest.raises(ManifestError, match="not UTF-8"):
        read_records(path, Item)


def test_resumable_writer_skips_written_ids_and_cuts_torn_line(tmp_path):
    path = tmp_path / "drops.jsonl"
    first = Drop(id="a@v", task="t", item_id="a", voice="v", stage="speak", reason=Reason(code="r"))
    second = Drop(id="b@v", task="t", item_id="b", voice="v", stage="speak", reason=Reason(code="r"))
    with ResumableJsonlWriter(path, Drop) as writer:
        assert writer.write(first)
    with open(path, "a", encoding="utf-8") as handle:  # a writer killed mid-line
        handle.write('{"id": "b@v", "ta')
    with ResumableJsonlWriter(path, Drop) as writer:
        assert "a@v" in writer
        assert not writer.write(first)
        assert writer.write(second)
    assert [drop.id for drop in read_records(path, Drop)] == ["a@v", "b@v"]


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "deep" / "report.json"
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]


def test_stable_hash_ignores_key_order():
    assert stable_hash({"a": 1, "b": [1, 2]}) == stable_hash({"b": [1, 2], "a": 1})
    assert stable_hash({"a": 1}) != stable_hash({"a": 2})
