import pytest

from tests.items.source_fixtures import write_csv
from s2sbench.pipeline.core.manifest import ManifestError
from s2sbench.pipeline.items.rewrite.base import Question, RewriteRejected, Statements, check_statements
from s2sbench.pipeline.items.load import load_task_items
from s2sbench.pipeline.catalog.tasks import load_task

HEADER = ["", "Question", "A", "B", "C", "D", "Answer"]


def cmmlu_task(make_task, folder, rewriters=("rules",), **source):
    return make_task(
        language="zh",
        source={"loader": "cmmlu", "path": str(folder), **source},
        candidates={"construction": "scmmlu_rewrite", "options": {"rewriters": list(rewriters)}},
    )


def test_demo_task_is_fully_handled_by_the_rule_rewriter():
    result = load_task_items(load_task("demo-scmmlu-zh"))
    assert len(result.items) == 12 and result.drops == []
    assert result.report()["handled"] == {"rules": 12}
    moon = next(item for item in result.items if item.id == "demo-scmmlu-zh-science-4")
    assert moon.context == "月球本身不发光，我们看到的月光来自"
    assert moon.candidates[moon.right] == "太阳的反射。"
    assert moon.meta["rewriter"] == "rules" and moon.meta["answer"] == "A"
    assert moon.meta["options"] == ["太阳的反射", "月球的火山", "地球的灯光", "星星的照射"]


@pytest.mark.parametrize("statements,reason", [
    (Statements(" ", ("甲", "乙", "丙", "丁")), "empty first half"),
    (Statements("答案是", ("甲", "乙", "丙")), "3 second halves"),
    (Statements("答案是", ("甲", "甲", "丙", "丁")), "not distinct"),
    (Statements("答案是", ("乙", "甲", "丙", "丁")), "second half A does not contain its option"),
    (Statements("答案是", ("甲", "乙", "", "丁")), "empty second half"),
])
def test_validation_drops_bad_rewrites(statements, reason):
    with pytest.raises(RewriteRejected, match=reason):
        check_statements(Question("答案是：", ("甲", "乙", "丙", "丁"), 0), statements)


def test_cmmlu_folder_split_subjects_and_rewrite_report(make_task, tmp_path):
    write_csv(tmp_path / "data" / "dev" / "physics.csv", HEADER, [
        ["0", "光在真空中的速度约为（）。", "3万公里每秒", "30万公里每秒", "300万公里每秒", "3000万公里每秒", "B"],
        ["1", "下列哪一种材料是良好的导体", "铜", "玻璃", "橡胶", "陶瓷", "A"],
        ["2", "光是电磁波吗", "是", "不是", "不一定", "无法判断", "A"],
    ])
    write_csv(tmp_path / "data" / "dev" / "history.csv", HEADER, [
        ["0", "秦朝统一中国的时间是：", "公元前221年", "公元前206年", "公元618年", "公元960年", "A"],
    ])
    result = load_task_items(cmmlu_task(make_task, tmp_path / "data", split="dev"))
    assert [item.id for item in result.items] == ["t-history-0", "t-physics-0", "t-physics-1"]
    assert result.items[1].candidates[1] == "30万公里每秒。" and result.items[1].right == 1
    assert (result.items[2].context, result.items[2].candidates[0]) == ("良好的导体是", "铜")
    assert [item.meta["rule"] for item in result.items] == ["colon", "blank", "which_inverted"]
    report = result.report()
    assert report["handled"] == {"rules": 3}
    assert report["handled_by_rule"] == {"colon": 1, "blank": 1, "which_inverted": 1}
    assert report["rejected"] == {"rules": {"no option can stand in for the question word … where it is": 1}}
    drop = result.drops[0]
    assert drop.stage == "rewrite" and drop.item_id == "t-physics-2" and "physics.csv:4" in drop.reason.detail
    assert drop.reason.code == "rules: no option can stand in for the question word … where it is"
    assert "rules: no option can stand in for the question word '吗' where it is" in drop.reason.detail
    only = load_task_items(cmmlu_task(make_task, tmp_path / "data" / "dev", options={"subjects": ["history"]}))
    assert len(only.items) == 1


def test_cmmlu_answer_out_of_range_and_empty_option(make_task, tmp_path):
    write_csv(tmp_path / "dev" / "x.csv", HEADER, [
        ["0", "第一个数字是：", "一", "二", "三", "四", "E"],
        ["1", "第二个数字是：", "一", "", "三", "四", "A"],
        ["2", "第三个数字是：", "一", "二", "三", "四", "C"],
    ])
    with pytest.raises(ManifestError, match=r"x.csv:2: field 'Answer': answer 'E' is not one of A, B, C, D"):
        load_task_items(cmmlu_task(make_task, tmp_path / "dev"))
    result = load_task_items(cmmlu_task(make_task, tmp_path / "dev", on_bad_row="drop"))
    assert [item.id for item in result.items] == ["t-x-2"]
    assert result.report()["source_drop_reasons"] == {"answer 'E' is not one of A, B, C, D": 1, "empty option": 1}


def test_unknown_rewriter_names_the_task_key(make_task, tmp_path):
    from s2sbench.pipeline.items.task_config import TaskConfigError

    write_csv(tmp_path / "dev" / "x.csv", HEADER, [["0", "甲是：", "一", "二", "三", "四", "A"]])
    with pytest.raises(TaskConfigError, match=r"t.yaml: key 'candidates.options.rewriters.0': unknown rewriter 'magic' \(known: llm, rules\)"):
        cmmlu_task(make_task, tmp_path / "dev", rewriters=["magic"])


def test_split_that_does_not_match_the_folder_is_an_error(make_task, tmp_path):
    from s2sbench.pipeline.items.task_config import TaskConfigError

    write_csv(tmp_path / "dev" / "x.csv", HEADER, [["0", "第一个数字是：", "一", "二", "三", "四", "A"]])
    with pytest.raises(TaskConfigError, match=r"key 'source.split': 'test', but .*dev has no test/ folder"):
        load_task_items(cmmlu_task(make_task, tmp_path / "dev", split="test"))
    assert len(load_task_items(cmmlu_task(make_task, tmp_path / "dev", split="dev")).items) == 1


def test_rewrite_drops_are_coded_by_kind_and_the_report_can_plot_them(make_task, tmp_path):
    """A drop's code is the kind of reason (the option, formula or question words it quotes are in the detail), so
    the report groups alike drops: the whole test split's 1,013 distinct reasons made a plot of as many bars, and one
    that quoted a LaTeX option ('$...$', which matplotlib reads as math) crashed the report."""
    from collections import Counter

    from s2sbench.evaluation.report.plots import drop_reasons

    write_csv(tmp_path / "dev" / "x.csv", HEADER, [
        ["0", "下列函数中是奇函数的是（ ）。", "$y=x^2$", "$y=x^3$", "$\\mathrm{A}，\\mathrm{B}$均是", "都不是", "B"],
        ["1", "下列属于哺乳动物的是（ ）。", "鲸", "鲨鱼", "A和B都是", "都不是", "A"],
        ["2", "哪个城市是首都，哪个城市最大", "北京", "上海", "广州", "深圳", "A"],
    ])  # fmt: skip
    result = load_task_items(cmmlu_task(make_task, tmp_path / "dev"))
    codes = Counter(drop.reason.code for drop in result.drops)
    assert codes == {"rules: option C … refers to the other options": 2, "rules: … question words …; an option fills one": 1}
    assert "mathrm{B}$均是" in result.drops[0].reason.detail and "(哪, 哪)" in result.drops[2].reason.detail
    # the report plots the codes, and a reason that still quotes a formula is drawn as text
    assert drop_reasons({"dropped items": {f"rewrite: {code}": n for code, n in codes.items()}}).startswith(b"\x89PNG")
    assert drop_reasons({"dropped items": {f"rewrite: {result.drops[0].reason.detail}": 1}}).startswith(b"\x89PNG")


def test_the_drop_plot_shows_the_most_common_reasons_and_the_rest_as_one_bar():
    """A build coded by whole sentences (before drops were coded by kind) had 1,013 reasons: the plot keeps 15 bars."""
    from s2sbench.evaluation.report import plots

    counts = {f"rewrite: rules: the stem ends in '{n}', which no option completes": 1 for n in range(1000)}
    counts["speak: error_rate"] = 376
    shown = plots._most_common(counts, plots.MAX_REASON_BARS)
    assert len(shown) == 15 and shown["speak: error_rate"] == 376 and shown["987 other reasons"] == 987
    assert sum(shown.values()) == sum(counts.values())
    assert plots.drop_reasons({"dropped items": counts}).startswith(b"\x89PNG")
    figure = plots.drop_reasons_figure({"rejected clip attempts": {"error_rate": 12_000, "repeated_ngram": 150},
                                        "dropped items (by stage)": counts})
    assert plots.layout_problems(figure) == []  # the long reasons wrap; the count ticks do not run together
