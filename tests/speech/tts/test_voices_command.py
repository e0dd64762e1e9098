from s2sbench.flows.cli import main


def test_voices_lists_and_checks(tmp_path, capsys):
    assert main(["voices", "--check", "--voice", "espeak-en-us", "--voice", "coqui-vctk-p225", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"espeak-en-us-{n}.wav" for n in (1, 2, 3)]
    assert "espeak-en-us  [espeak-ng, en]" in out and "ok: " in out and "real-time factor" in out
    assert "judge faster-whisper:tiny.en" in out and "WER overall" in out
    assert "missing: coqui model 'tts_models/en/vctk/vits' is not downloaded" in out
    assert "2 voices, 0 failed" in out


def test_voices_check_fails_for_a_broken_voice(tmp_path, capsys):
    path = tmp_path / "v.yaml"
    path.write_text("- id: bad\n  engine: espeak-ng\n  language: en\n  model: no-such-espeak-voice\n")
    assert main(["voices", "--file", str(path), "--check"]) == 1
    assert "FAILED: voice 'bad': espeak-ng has no voice 'no-such-espeak-voice'" in capsys.readouterr().out


def test_unknown_voice_is_a_user_error(capsys):
    assert main(["voices", "--voice", "nope"]) == 2
    assert "unknown voice(s) nope" in capsys.readouterr().err


def test_the_voice_check_prints_what_the_judge_heard_with_the_error_rate(capsys):
    """A native Japanese voice: each sentence said and heard, its kana error rate, and the overall rate."""
    assert main(["voices", "--check", "--voice", "kokoro-ja-alpha"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.strip().startswith("judge faster-whisper:base") and "KER per sentence" in line for line in lines)
    heard = [line for line in lines if "  ->  " in line]
    assert len(heard) == 4 and all(float(line.split()[0]) <= 1 for line in heard)
    assert heard[1].split()[1] == "砂漠で生きるために必要なものは何ですか?"
    overall = next(line.strip() for line in lines if line.strip().startswith("KER overall"))
    assert float(overall.split()[2].rstrip(";")) <= 0.15, lines
