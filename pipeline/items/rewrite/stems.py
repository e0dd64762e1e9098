"""Chinese question stems as the first half of a statement: clean-up, the words a stem may end in so that an option
appended to it completes the sentence, the question words an option can stand in for, and the "下列…" phrases that
point at a list of options the listener never hears.

Everything here is plain string work on the stem; :mod:`s2sbench.pipeline.items.rewrite.rules` decides which rule applies.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from s2sbench.pipeline.items.rewrite.base import RADICAL_CHARACTERS

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_PUNCTUATION = "\u3000-\u303f\uff00-\uff0f\uff1a-\uff20\u201c\u201d\u2018\u2019\u2014\u2026"
# Kangxi radicals and compatibility ideographs (⼆, ⽹) that PDF-extracted questions use for ordinary characters:
# NFKC maps them to the unified ideograph a voice can read. Full NFKC would also turn （，） into ASCII, so only these.
_COMPATIBILITY = re.compile("[\u2e80-\u2fdf\uf900-\ufaff]")
_SPACE_BY_CJK = re.compile(rf"\s+(?=[{CJK}{CJK_PUNCTUATION}])|(?<=[{CJK}{CJK_PUNCTUATION}])\s+")
_QUOTED = re.compile(r"“[^”]*”|‘[^’]*’|「[^」]*」|《[^》]*》|\"[^\"]*\"")
_END_PUNCTUATION = re.compile(r"[\s。．.；;,，、]+$")
# An option that is a number (with its unit or a second number: "16～17天", "8种和5种", "十章97条").
NUMERIC = re.compile(rf"^[-+−]?(?:\d|[零一二三四五六七八九十两](?![{CJK}]{{3}}))")


def readable(text: str) -> str:
    """Compatibility ideographs and radicals mapped to the characters they stand for (``⼆维表格``, ``油罐⻋``)."""
    text = _COMPATIBILITY.sub(lambda match: unicodedata.normalize("NFKC", match[0]), text)
    return text.translate(RADICAL_CHARACTERS).strip()


def clean(stem: str) -> str:
    """A stem made readable, without the spaces PDF extraction leaves next to Chinese text (``则 其现年``)."""
    return _SPACE_BY_CJK.sub("", readable(stem))


def strip_end(text: str) -> str:
    """The stem without its final full stop, comma or spaces (a colon or question mark is kept: they mean something)."""
    return _END_PUNCTUATION.sub("", text)


def unquoted(text: str) -> str:
    """``text`` with quoted spans and titles blanked out (same length), so a 谁 inside a quotation is not the question."""
    return _QUOTED.sub(lambda match: "□" * len(match[0]), text)


# ---------------------------------------------------------------- "下列…" phrases

# "下列说法中正确的是" -> "正确的说法是": the judgement moves before the noun, which no longer points at a list.
_WHICH_JUDGEMENT = re.compile(
    r"(?:下列|以下|下面)(?:的)?(?P<noun>说法|叙述|表述|描述|判断|观点|论述|理解|分析|做法|选项)(?:中)?[，,]?"
    r"(?P<judgement>正确|错误|不正确|准确|不准确|恰当|不恰当|合理|不合理|符合题意|不符合题意)的(?:一项|一个|一组)?是"
)
# "下列选项中，" / "以下各项中，": a phrase about the options themselves says nothing once they are not read out.
_WHICH_OPTIONS = re.compile(r"(?:下列|以下|下面)(?:的)?(?:各项|各选项|选项|几项|几个选项|四个选项|四项)(?!中?的)(?:中|当中|之中)?[，,]?")
# "下列鸭品种中，" -> "在鸭品种中，": at the start of a clause, "among the following X" becomes "among X".
_WHICH_AMONG = re.compile(
    r"(?:(?<=^)|(?<=[，,。；;：:]))(?:下列|以下|下面)(?!各?选?项)(?P<noun>[^，,。；;：:的哪是为有]{1,8}?)"
    r"(?:当中|之中|中(?![国心华文央间部]))"
)
# The bare word; 以下/下面 also mean "below / under" ("18岁以下"), so only at the start of a clause.
_WHICH_WORD = re.compile(rf"下列(?:的)?|(?:(?<=^)|(?<=[，,。；;：:]))(?:以下|下面)(?:的)?(?![{CJK_PUNCTUATION}])")


def drop_which_phrases(stem: str) -> str:
    """``stem`` with "下列/以下/下面" ("the following") taken out, since the listener hears no list."""
    stem = _WHICH_JUDGEMENT.sub(lambda match: f"{match['judgement']}的{match['noun']}是", stem)
    stem = _WHICH_OPTIONS.sub("", stem)
    stem = _WHICH_AMONG.sub(lambda match: f"在{match['noun']}中", stem)
    return _WHICH_WORD.sub("", stem)


# ---------------------------------------------------------------- endings an option completes

# Copulas, verbs that take an object, prepositions, conjunctions ("语言、符号和" + 图像), adverbs before a predicate
# ("消费将" + 增长较小份额) and "=" ("a11+a14=" + 68).
COMPLETING_ENDINGS = frozenset("""
是 为 有 在 于 由 指 属 称 叫 即 和 与 及 或 将 就 才 都 最 更 较 越 愈 向 对 以 用 从 达 约 含 了 把 被 给 需 应 宜 要
能 会 可 作 做 成 到 出 着 = ＝
出现在 发生在 表现在 体现在 反映在 处在 来自 来源于 源于 始于 出自
包括 包含 具有 具备 拥有 采取 导致 引起 造成 出现 发生 产生 获得 主张 认为 强调 重视 注重 体现 反映 说明 表明 显示
证明 意味着 保证 确保 要求 必须 能够 应当 应该 进行 实行 实施 遵循 坚持 选择 判断 确定 认定 描述 研究 考察 测量
测定 衡量 满足 符合 涉及 依据 根据 按照 通过 依靠 依赖 发挥 促进 影响 保护 治疗 预防 防止 避免 掌握 处理 解决 反对
支持 表示 标志着 代表 命名 看待 针对 面对 经历 采纳 参考 借鉴 使 使得 让 令 受 承担 负责 推动 首先 往往 常常 通常
一般 多见 好发 最早 率先
""".split())
# Words that end in one of those characters but are nouns or adjectives: a stem ending in them is a noun phrase.
NOT_COMPLETING = frozenset("""
于是 但是 可是 凡是 行为 人为 无为 有为 现在 所在 内在 外在 实在 潜在 自在 终于 固有 特有 稀有 国有 私有
公有 手指 食指 戒指 拇指 金属 家属 亲属 下属 附属 眷属 名称 对称 职称 尊称 爱称 昵称 立即 随即 旋即 总和 温和 缓和
平和 柔和 暖和 调和 共和 饱和 祥和 随和 大将 名将 主将 老将 猛将 武将 成就 造就 方向 动向 意向 走向 趋向 导向 志向
风向 去向 流向 取向 纵向 横向 定向 单向 双向 绝对 相对 一对 成对 派对 不对 作用 费用 信用 效用 功用 实用 有用 无用
常用 通用 专用 日用 家用 民用 军用 公用 备用 耐用 随从 侍从 发达 豁达 通达 条约 合约 契约 公约 婚约 简约 和约 盟约
罢了 算了 极了 反应 效应 感应 相应 报应 便宜 事宜 重要 摘要 纲要 提要 必要 首要 次要 简要 扼要 紧要 功能 技能 性能
才能 本能 智能 潜能 体能 效能 职能 动能 势能 热能 核能 电能 光能 机能 官能 万能 无能 产能 社会 大会 机会 协会 晚会
宴会 聚会 国会 议会 商会 工会 公会 年会 峰会 盛会 庙会 误会 约会 舞会 例会 教会 省会 都会 许可 认可 即可 尚可 工作
合作 著作 创作 动作 操作 写作 制作 发作 耕作 劳作 杰作 佳作 原作 习作 协作 运作 收成 现成 速成 周到 独到 支出 演出
杰出 突出 日出 衣着 最多 之多 许多 很多 诸多 较多 更多 居多 过多
""".split())
_LONGEST_ENDING = max(map(len, COMPLETING_ENDINGS | NOT_COMPLETING))


# "测量的是男女的" + 气质差异, "体现了我国刑法的" + 罪责刑相适应原则: a trailing 的 after a copula or a verb with 了
# in the same clause makes the option its head noun.
_COPULA_THEN_DE = re.compile(r"(?:是|为|属于|了)[^，,。；;：:]*的$")


# "鲁迅的《野草》是一部" + 散文诗集: a copula or verb, then "one" and a measure word, before the option's noun.
_ONE_OF_A_KIND = re.compile(r"(?:是|为|有|成|属于|作为)一[个种部篇本位件项门类首幅座次名份条]$")


def completing_ending(stem: str) -> str | None:
    """The word ``stem`` ends in when an option appended to it completes the sentence, else None."""
    if _COPULA_THEN_DE.search(stem):
        return "的"
    if _ONE_OF_A_KIND.search(stem):
        return stem[-2:]
    for size in range(min(_LONGEST_ENDING, len(stem)), 0, -1):
        tail = stem[-size:]
        if tail in NOT_COMPLETING:
            return None
        if tail in COMPLETING_ENDINGS:
            return tail
    return None


# "当边际产量为零时" + "，总产量最大": a time or condition clause that the option, as the main clause, completes.
CONDITION_CLAUSE = re.compile(r"^(?:当|在|若|如果|假如|假设|一旦|每当)[^，,。；;？?]*?(?:时|后|以后|之后|的话)$")


# ---------------------------------------------------------------- question words

_MEASURE = "个种位项条类件次年天岁倍名只章节块本张人句组部"
QUESTION_WORD = re.compile(
    rf"谁|什么|哪(?!怕)|多少|几(?=[{_MEASURE}])|怎样|怎么|(?<!无论)如何|为何|何(?=[种时地处人者])|是否|[吗呢]$"
)


@dataclass(frozen=True)
class Slot:
    """Where the option goes: ``before + option + after``."""

    before: str
    after: str
    kind: str  # "in place" (the option replaces the question phrase) or "inverted" ("…的国家是" + option)


def question_words(stem: str, few: bool = True) -> list[re.Match[str]]:
    """The question words outside quotations; ``few=False`` leaves out 几, which also means "a few"."""
    return [match for match in QUESTION_WORD.finditer(unquoted(stem)) if few or match[0] != "几"]


_PLACE_OR_TIME = re.compile(r"哪里|哪儿|何地|何处|何时|哪一?年|什么(?:时候|时间|地方|时期|年代|朝代)")
_WHICH_PHRASE = rf"(?:哪|何)(?:一)?(?:部分|方面|时期|[{_MEASURE}些国])?"
_PHRASE_AT_END = re.compile(rf"(?:{_WHICH_PHRASE}|什么|谁)(?P<noun>[{CJK}]{{0,4}})$")
_HOW_TO_ACT = re.compile(r"(?:怎样|怎么|如何)(?:做|办|处理)$")
# After "哪一项" a predicate ("是错误的", "正确") is not a noun the option may stand before: dropping or keeping it
# would change what the statement says.
_PREDICATE_WORD = re.compile(r"是|为|不|没|错|对|正确|有|属|能|可|会|在|被")
_WHICH_BEFORE_DE = re.compile(rf"{_WHICH_PHRASE}[{CJK}]{{0,4}}?(?=的)")
# What the predicate after "哪个(国家)" may start with, so that the noun between them can be told off.
_PREDICATE_START = (
    r"(?:不|没有|没|是|属于|可以|可|能|会|在|有|具有|被|应|需要|最|更|与|和|对|由|为|易|常|通常|一般|主要|首先|符合|正确|错误|"
    r"适用|适合|用于|发生|出现|导致|引起|造成|曾|率先|首次|第一个)"
)
_INVERTIBLE = re.compile(
    rf"^(?P<head>{_WHICH_PHRASE})(?P<noun>[^的是\W]{{0,4}}?)(?P<predicate>(?:{_PREDICATE_START}|(?<=[^\W的是])的(?!是))[^，,。；;：:]*)$"
)


def question_slot(stem: str, options: tuple[str, ...]) -> Slot | None:
    """Where an option can stand in for the stem's one question word, or None when it cannot (said by the caller)."""
    (match,) = question_words(stem)
    before, word, after = stem[: match.start()], match[0], stem[match.start() :]
    if word == "谁" and before:
        return Slot(before, stem[match.end() :], "in place")
    place = _PLACE_OR_TIME.match(after)
    if place and before:
        return Slot(before, after[place.end() :], "in place")
    if word == "什么" and after.startswith("什么的"):
        return Slot(before, after[2:], "in place")
    if before and _HOW_TO_ACT.fullmatch(after):
        return Slot(before, "", "in place")
    at_end = _PHRASE_AT_END.fullmatch(after)
    if before and at_end and not _PREDICATE_WORD.search(at_end["noun"]):
        # "起什么作用" + 润滑 -> "起润滑作用", but "驾驶哪种车辆" + 三轮摩托车 -> "驾驶三轮摩托车": the noun stays
        # unless the options already carry it (share a character with it)
        noun = at_end["noun"]
        shared = any(set(noun) & set(option) for option in options)
        return Slot(before, "" if shared else noun, "in place")
    whose = _WHICH_BEFORE_DE.match(after)
    if whose and before and completing_ending(before) and len(after) - whose.end() > 2:  # "王一生是哪部作品的主人公" -> "王一生是" + "《棋王》的主人公"
        return Slot(before, after[whose.end() :], "in place")
    if word in ("谁", "哪", "何") and _opens_clause(before):
        return _inverted(before, after)
    return None


def _opens_clause(before: str) -> bool:
    """Whether the question phrase starts its clause: nothing before it, punctuation, "X中", or a bare topic
    ("病毒病哪种易发生潜伏感染"): a few characters with no 的 and no verb an option would complete."""
    clause = re.split(r"[，,。；;：:]", before)[-1]
    return not clause or clause.endswith("中") or (len(clause) <= 6 and "的" not in clause
                                                   and not completing_ending(clause))


def _inverted(before: str, after: str) -> Slot | None:
    """``以下哪个国家在本年度没有…计划`` -> ``在本年度没有…计划的国家是`` + option."""
    if after.startswith("谁"):
        predicate, noun = after[1:], ""
    else:
        match = _INVERTIBLE.match(after)
        if not match:
            return None
        predicate, noun = match["predicate"], match["noun"]
    if noun and predicate.startswith("的") and not predicate.startswith("的是"):
        predicate = predicate[1:]  # "哪部作品的作者不是白先勇" -> "作者不是白先勇的作品是"
    return inverted_slot(topic_lead(before), predicate, noun)


def inverted_slot(lead: str, predicate: str, noun: str = "") -> Slot | None:
    """The statement that names the answer last: "(哪个民族)是…更改族称的" -> "…更改族称的民族是", "(哪个城市)是X" -> "X是",
    "(哪个国家)在本年度没有…" -> "在本年度没有…的国家是"."""
    if predicate.startswith("是") and predicate.endswith("的"):
        predicate = predicate[1:-1]  # the 是…的 focus frame
    elif predicate.startswith("是"):
        predicate = predicate.lstrip("是")
        return Slot(lead + predicate + "是", "", "inverted") if predicate and not question_words(predicate) else None
    elif predicate.endswith("的"):
        predicate = predicate[:-1]
    if not predicate or question_words(predicate):
        return None
    return Slot(lead + f"{predicate}的{noun}是", "", "inverted")


def topic_lead(before: str) -> str:
    """A topic left before an inverted question ("病毒病") becomes "病毒病中，"; a clause keeps its punctuation."""
    if not before or before[-1] in "，,。；;：":
        return before
    return before + ("，" if before.endswith("中") else "中，")


_COUNT = re.compile(rf"(?P<word>多少|几)(?P<measure>[{_MEASURE}]?)")


def count_slot(stem: str, options: tuple[str, ...]) -> Slot | None:
    """``我国共有多少个少数民族`` with numbers as options: the number takes the place of 多少 (and of the measure word
    too when the options carry it: ``各有几种`` + ``8种和5种``)."""
    match = _COUNT.search(stem)
    if not match or not all(NUMERIC.match(option) for option in options) or not match.start():
        return None
    measure = match["measure"]
    if measure and all(measure in option for option in options):
        return Slot(stem[: match.start()], stem[match.end() :], "in place")
    return Slot(stem[: match.start()], stem[match.start() + len(match["word"]) :], "in place")
