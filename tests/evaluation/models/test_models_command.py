import json

from s2sbench.flows.cli import main


def test_models_command_lists_every_adapter(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in ("hf-causal", "smollm2", "cascade", "qwen2-audio", "qwen2.5-omni", "granite-speech", "remote-code"):
        assert name in out
    assert "Qwen/Qwen2-Audio-7B" in out and "unverified" in out


def test_models_command_json(capsys):
    assert main(["models", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["name"]: row["status"] for row in rows}["cascade"] == "verified"
    assert all(row["modes"] for row in rows if row["status"] != "third-party")
