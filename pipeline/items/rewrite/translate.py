"""English stories into Chinese for zh-sStoryCloze, through the same cached LLM client as the rewriter.

English personal names are replaced by Chinese names from a fixed list *before* translation, consistently within a
story (each name maps to one Chinese name; the list's starting point depends on the story id, so stories differ but
a rebuild gives the same names). A name is a word from :data:`ENGLISH_NAMES`, or a capitalized word that also
appears capitalized in mid-sentence in the same story (so ``The``/``Yesterday`` at a sentence start are not names),
unless it follows a place preposition (``in Ohio``). Brands and places written otherwise in mid-sentence capitals
are still taken for names: a known limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from s2sbench.pipeline.core.manifest import stable_hash
from s2sbench.pipeline.items.rewrite.base import RewriteRejected
from s2sbench.pipeline.items.rewrite.llm import CachedChat, Messages

CHINESE_NAMES = (
    "李华", "王芳", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄丽", "周杰", "吴敏", "徐强", "孙悦", "马超", "朱琳",
    "胡斌", "郭涛", "何欢", "林峰", "高洁", "罗刚", "郑爽", "梁晨", "谢婷", "宋佳", "唐宁", "许诺", "韩雪", "冯毅",
    "曹阳", "彭丹", "曾凡", "萧然", "田甜", "董浩", "袁媛", "潘越", "蒋勇", "蔡琴", "余波", "杜鹃",
)
ENGLISH_NAMES = frozenset("""
Aaron Adam Alex Alice Allie Amanda Amy Andrew Andy Angela Anna Anne Ashley Barbara Ben Beth Bill Bob Brad Brandon
Brian Carl Carla Carol Carrie Charles Charlie Chris Cindy Claire Craig Dan Daniel Dave David Debbie Dennis Diana Donna
Doug Emily Emma Eric Erin Frank Fred Gary George Gina Greg Hannah Harry Heather Helen Henry Jack Jackie Jake James Jamie
Jane Janet Jason Jay Jeff Jen Jenny Jerry Jessica Jill Jim Jimmy Joan Joe Joey John Jon Josh Joy Julie Justin Karen
Kate Katie Kathy Kelly Ken Kevin Kim Kyle Larry Laura Lauren Lisa Liz Lucy Luke Lynn Maria Mark Martha Mary Matt Megan
Mike Molly Nancy Nick Nina Pam Pat Patrick Paul Peter Phil Rachel Ray Rick Rob Robert Ron Rose Ryan Sally Sam Sara
Sarah Scott Sean Steve Sue Susan Tim Tina Todd Tom Tommy Tony Tyler Will Zoe
""".split())
# Capitalized words that are never personal names even in mid-sentence.
NOT_NAMES = frozenset("""
I Mr Mrs Ms Dr Mom Dad Mommy Daddy Grandma Grandpa God Christmas Easter Halloween Thanksgiving Monday Tuesday
Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October
November December English Spanish French Chinese American TV OK
""".split())
PLACE_PREPOSITIONS = frozenset({"in", "to", "at", "from", "near", "into", "across", "visit", "visited"})
WORD = re.compile(r"[A-Z][a-z]+")
CJK = re.compile(r"[\u4e00-\u9fff]")


def find_names(texts: list[str]) -> list[str]:
    """The personal names of a story, in order of first appearance."""
    mid_sentence = set()
    for text in texts:
        for match in WORD.finditer(text):
            before = text[: match.start()].rstrip()
            # "moved to Texas", "lived in Ohio": a capital after a place preposition is a place, not a person
            if before and before[-1] not in ".!?\"“" and before.split()[-1].lower() not in PLACE_PREPOSITIONS:
                mid_sentence.add(match.group())
    names: list[str] = []
    for text in texts:
        for word in WORD.findall(text):
            if word in NOT_NAMES or word in names:
                continue
            if word in ENGLISH_NAMES or word in mid_sentence:
                names.append(word)
    return names


def assign_names(names: list[str], story_key: str) -> dict[str, str]:
    start = int(stable_hash(story_key)[:8], 16) % len(CHINESE_NAMES)
    return {name: CHINESE_NAMES[(start + offset) % len(CHINESE_NAMES)] for offset, name in enumerate(names)}


def replace_names(text: str, mapping: dict[str, str]) -> str:
    for name, chinese in mapping.items():
        text = re.sub(rf"\b{name}\b", chinese, text)
    return text


@dataclass(frozen=True)
class Translation:
    lines: tuple[str, ...]  # the translated texts, in the order given
    names: dict[str, str]  # English name -> Chinese name


INSTRUCTIONS = (
    "把下面编号的英文句子逐句翻译成自然流畅的中文。句子里的中文人名保持不变。"
    "只输出译文，每行以相同的编号开头，例如“1. ……”，不要解释。"
)


class StoryTranslator:
    def __init__(self, chat: CachedChat, max_tokens: int = 512):
        self.chat, self.max_tokens = chat, max_tokens

    def translate(self, texts: list[str], story_key: str) -> Translation:
        """Translate a story's lines with its names replaced; raises :class:`RewriteRejected` on a bad reply."""
        names = assign_names(find_names(texts), story_key)
        english = [replace_names(text, names) for text in texts]
        numbered = "\n".join(f"{index}. {text}" for index, text in enumerate(english, start=1))
        messages: Messages = [{"role": "user", "content": f"{INSTRUCTIONS}\n\n{numbered}"}]
        lines = parse_numbered(self.chat.complete(messages, self.max_tokens), len(texts))
        for index, (source, line) in enumerate(zip(english, lines), start=1):
            if not CJK.search(line):
                raise RewriteRejected(f"line {index} is not Chinese: {line!r}")
            for name, chinese in names.items():
                if chinese in source and chinese not in line:
                    raise RewriteRejected(f"line {index} lost the name {chinese} (for {name})")
                if re.search(rf"\b{name}\b", line):
                    raise RewriteRejected(f"line {index} still has the English name {name}")
        return Translation(tuple(lines), names)


NUMBERED = re.compile(r"^\s*(\d+)\s*[.．、:：)]\s*(.+?)\s*$")


def parse_numbered(reply: str, count: int) -> list[str]:
    found: dict[int, str] = {}
    for line in reply.splitlines():
        match = NUMBERED.match(line)
        if match and 1 <= int(match.group(1)) <= count:
            found.setdefault(int(match.group(1)), match.group(2))
    missing = [str(number) for number in range(1, count + 1) if number not in found]
    if missing:
        raise RewriteRejected(f"reply has no line numbered {', '.join(missing)}")
    return [found[number] for number in range(1, count + 1)]
