from s2sbench.flows.cli import main


def test_voices_lists_and_checks(tmp_path, capsys):
    assert main(["voices", "--check", "--voice", "espeak-en-us", "--voice", "coqui-vctk-p225", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert [path.name for path in tmp_path.iterdir()] == ["espeak-en-us.wav"]
    assert "espeak-en-us  [espeak-ng, en]" in out and "ok: " in out and "real-time factor" in out
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
