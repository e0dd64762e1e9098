"""The rule rewriter, rule by rule, on questions written for these tests (not CMMLU rows): what each rule writes,
and what it refuses with which reason."""

import pytest

from s2sbench.pipeline.items.rewrite.base import Question, RewriteRejected, check_statements
from s2sbench.pipeline.items.rewrite.rules import RuleRewriter
from s2sbench.pipeline.items.rewrite.stems import clean, completing_ending, drop_which_phrases

ANIMALS = ("鲨鱼", "鲸", "蝙蝠", "海豚")
POETS = ("李白", "杜甫", "白居易", "王维")


def rewrite(text, options=ANIMALS):
    question = Question(text, options, 0)
    statements = RuleRewriter().rewrite(question)
    check_statements(question, statements)
    return statements


@pytest.mark.parametrize("text, options, rule, first_half, first_statement_end", [
    # blanks
    ("地球绕太阳公转一周大约需要（ ）。", ("一年", "一月", "一天", "十年"), "blank", "地球绕太阳公转一周大约需要", "一年。"),
    ("端午节有赛（）的习俗。", ("龙舟", "马", "跑", "诗"), "blank", "端午节有赛", "龙舟的习俗。"),
    ("植物吸收的气体是____。", ("二氧化碳", "氧气", "氮气", "氢气"), "blank", "植物吸收的气体是", "二氧化碳。"),
    ("水在标准大气压下的沸点为[ ]", ("100℃", "90℃", "80℃", "0℃"), "blank", "水在标准大气压下的沸点为", "100℃"),
    ("李白被后人誉为（）？", ("诗仙", "诗圣", "诗鬼", "诗佛"), "blank", "李白被后人誉为", "诗仙。"),
    ("（）是我国最大的淡水湖。", ("鄱阳湖", "洞庭湖", "太湖", "洪泽湖"), "blank", "我国最大的淡水湖是", "鄱阳湖"),
    # "下列…的是": the phrase pointing at the unheard list goes
    ("下列不属于哺乳动物的是", ANIMALS, "which_of_the_following", "不属于哺乳动物的是", "鲨鱼"),
    ("下列说法中正确的是", ("水往低处流", "太阳从西边升起", "鱼在天上飞", "冰是热的"), "which_of_the_following",
     "正确的说法是", "水往低处流"),
    ("关于光合作用，下列叙述错误的是", ("需要光", "产生氧气", "消耗二氧化碳", "只在夜间进行"), "which_of_the_following",
     "关于光合作用，错误的叙述是", "需要光"),
    ("以下选项中，属于可再生能源的是", ("太阳能", "煤炭", "石油", "天然气"), "which_of_the_following",
     "属于可再生能源的是", "太阳能"),
    # a stem ending in a copula, a verb, a preposition, a conjunction, "是一部", "V了…的"
    ("《红楼梦》的作者是", ("曹雪芹", "罗贯中", "施耐庵", "吴承恩"), "completion", "《红楼梦》的作者是", "曹雪芹"),
    ("18岁以下的未成年人的监护人应当由", ("父母担任", "邻居担任", "老师担任", "同学担任"), "completion",
     "18岁以下的未成年人的监护人应当由", "父母担任"),
    ("《呐喊》是一部", ("小说集", "诗集", "散文集", "剧本"), "completion", "《呐喊》是一部", "小说集"),
    ("这一现象体现了市场经济的", ("竞争性", "平等性", "开放性", "法制性"), "completion", "这一现象体现了市场经济的",
     "竞争性"),
    ("商业伦理学最早出现在", ("英国", "法国", "美国", "意大利"), "completion", "商业伦理学最早出现在", "英国"),
    ("信息表现形式有语言、符号和", ("图像", "声音", "雕塑", "文字"), "completion", "信息表现形式有语言、符号和", "图像"),
    ("抽样误差是由:", ("抽样引起", "测量引起", "计算引起", "采样引起"), "colon", "抽样误差是由", "抽样引起"),
    ("当物体所受合力为零时", ("物体保持静止", "物体一定静止", "物体加速", "物体减速"), "condition",
     "当物体所受合力为零时，", "物体保持静止"),
    # question words the option stands in for
    ("《静夜思》是谁的作品", POETS, "question_word", "《静夜思》是", "李白的作品"),
    ("被称为“诗圣”的是谁？", POETS, "question_word", "被称为“诗圣”的是", "李白"),
    ("水的化学式是什么", ("H2O", "CO2", "O2", "NaCl"), "question_word", "水的化学式是", "H2O"),
    ("“望梅止渴”原本是用来形容什么的", ("空想", "口渴", "行军", "梅子"), "question_word", "“望梅止渴”原本是用来形容",
     "空想的"),
    ("古代奥运会起源于哪里", ("希腊", "罗马", "埃及", "波斯"), "question_word", "古代奥运会起源于", "希腊"),
    ("润滑油在机器中起什么作用", ("润滑", "加热", "照明", "装饰"), "question_word", "润滑油在机器中起", "润滑作用"),
    ("安全头枕能保护驾驶人的什么部位", ("颈部", "腰部", "腿部", "胸部"), "question_word", "安全头枕能保护驾驶人的",
     "颈部"),
    ("车辆起步前应先怎样做", ("观察周围交通情况", "鸣喇叭", "加速", "熄火"), "question_word", "车辆起步前应先",
     "观察周围交通情况"),
    ("王一生是下列哪部作品的主人公", ("《棋王》", "《树王》", "《孩子王》", "《家》"), "question_word", "王一生是",
     "《棋王》的主人公"),
    # questions that start with the question word are turned around
    ("下列哪个城市是中国的首都", ("北京", "上海", "广州", "深圳"), "which_inverted", "中国的首都是", "北京"),
    ("以下哪个国家最早进行工业革命", ("英国", "法国", "德国", "美国"), "which_inverted", "最早进行工业革命的国家是",
     "英国"),
    ("谁发明了电话", ("贝尔", "爱迪生", "莫尔斯", "特斯拉"), "which_inverted", "发明了电话的是", "贝尔"),
    ("下列哪部作品的作者是鲁迅", ("《呐喊》", "《家》", "《子夜》", "《边城》"), "which_inverted", "作者是鲁迅的作品是",
     "《呐喊》"),
    ("下列民族中哪个民族是在明代迁入的", ("回族", "苗族", "彝族", "壮族"), "which_inverted", "在民族中，在明代迁入的民族是",
     "回族"),
    # a predicate after 哪一项 is kept in the statement, never dropped with the question word
    ("关于光合作用的说法，哪一项正确?", ("需要光", "不需要光", "只在夜间", "不产生氧"), "which_inverted",
     "关于光合作用的说法，正确的是", "需要光"),
    # numbers
    ("一年中共有多少个月", ("12", "10", "11", "13"), "numeric", "一年中共有", "12个月"),
    ("核酸的碱基共有几种", ("5种", "4种", "6种", "8种"), "numeric", "核酸的碱基共有", "5种"),
    ("3+4=", ("7", "6", "8", "9"), "numeric", "3+4=", "7"),
    ("引用了几位作家的文字，他们是", ("鲁迅、胡适", "老舍、巴金", "冰心、丁玲", "茅盾、曹禺"), "completion",
     "引用了几位作家的文字，他们是", "鲁迅、胡适"),  # 几 means "a few" here: the options are not numbers
])
def test_rule_writes_the_statements(text, options, rule, first_half, first_statement_end):
    statements = rewrite(text, options)
    assert (statements.rule, statements.first_half, statements.second_halves[0]) == (rule, first_half,
                                                                                     first_statement_end)


@pytest.mark.parametrize("text, options, reason", [
    ("咽的分部", ANIMALS, "the stem ends in '咽的分部', which no option completes"),
    ("这种做法的作用", ANIMALS, "the stem ends in '法的作用'"),  # 作用 ends in 用 but is a noun
    ("长江的源头现在", ANIMALS, "which no option completes"),
    ("甲（）乙（）丙丁", ANIMALS, "2 blanks"),
    ("教育的本体功能是什么? ()", ANIMALS, "the text before the blank is a question"),
    ("“____，垂二千年而弗能改矣。”句中横线处应填入", ANIMALS, "an instruction about the blank"),
    ("（）与（）是哺乳动物", ANIMALS, "2 blanks"),
    ("则 $q_x^{(2)}=()$ 。", ("0.1", "0.2", "0.3", "0.4"), "LaTeX formula"),
    ("《反恐怖主义法》规定共有几章几条", ("十章97条", "十章95条", "九章96条", "八章98条"), "2 question words"),
    ("这个说法正确吗", ("正确", "错误", "不确定", "部分正确"), "question word '吗'"),
    ("为什么天空是蓝色的", ("散射", "反射", "折射", "吸收"), "question word '什么'"),
    ("一周有几天", ("7天", "5天", "6天", "8天"), "first half '一周有' is shorter than 4 characters"),
    ("光合作用的条件哪一条是错误的?", ("需要光", "需要水", "需要叶绿体", "需要黑暗"), "question word '哪'"),
    ("分子式为C4H10的同分异构体有(不考虑立体异构)", ("2种", "3种", "4种", "5种"), "bracketed note"),
    ("我国的外交政策有：a独立自主；b和平共处；c结盟", ("ab", "ac", "bc", "abc"), "codes for items listed"),
    ("下列选项中正确的是", ("甲", "乙", "以上都不是", "丁"), "option C ('以上都不是') refers to the other options"),
    ("结果导致数量增加的是哪一种", ("A和C均是", "倒位", "重复", "缺失"), "option A"),
])
def test_rules_refuse_with_a_reason(text, options, reason):
    with pytest.raises(RewriteRejected, match=reason.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        rewrite(text, options)


def test_stem_clean_up():
    assert clean("则 其现年 28 岁，⼆维表格，油罐⻋") == "则其现年28岁，二维表格，油罐车"  # PDF spaces, radicals
    assert drop_which_phrases("下列选项中的概念关系，与甲一致的是") == "选项中的概念关系，与甲一致的是"
    assert drop_which_phrases("5岁以下儿童，以下属于被动攻击的是") == "5岁以下儿童，属于被动攻击的是"
    assert completing_ending("需要层次论认为，人的最低层需要是") == "是"  # 要是 ("if") is not the ending here
    assert completing_ending("这种做法的作用") is None
    options = ("吴组缃 叶圣陶", "叶圣陶 吴组缃", "萧红 艾芜", "艾芜 萧红")  # spaces inside options separate names
    assert rewrite("这两部作品的作者依次是", options).second_halves[0] == "吴组缃 叶圣陶"
