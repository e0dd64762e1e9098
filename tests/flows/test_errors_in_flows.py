"""An error of a known kind raised inside a Prefect task of a flow reaches the terminal as the one line it gives
outside one (docs/errors.md): `s2sbench build: <kind> error: <message>`, its exit code, no traceback. Each kind is
raised from the build flow's speak task, as a stage would raise it, by the CLI in a process of its own whose stderr
is read whole (one process runs the five commands in turn, each followed by a marker line)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

PLANTED = {
    "config": ("ConfigError", "planted.yaml: key 'gate.max_attempts': planted config mistake", 2, "config"),
    "data": ("DataError", "planted.jsonl:3: field 'right': planted data mistake", 3, "data"),
    "backend": ("BackendError", "planted engine failed to load", 4, "backend"),
    "environment": ("EnvironmentFault", "planted folder is in use by s2sbench pid 1", 5, "environment"),
    "disk-full": ("OSError", "planted shard file", 5, "environment"),
}
COMMANDS = """
import errno, json, sys
import s2sbench.flows.build as build
from s2sbench.flows.cli import main
from s2sbench.pipeline.core.errors import BackendError, ConfigError, DataError, EnvironmentFault

planted, task, folder = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
for name, (kind, message, _, _) in planted.items():
    def planted_stage(*args, kind=kind, message=message, **kwargs):
        if kind == "OSError":
            raise OSError(errno.ENOSPC, "No space left on device", message)
        raise globals()[kind](message)

    build.speak_shard = planted_stage
    code = main(["build", task, "--out", f"{folder}/{name}", "--limit", "1", "--store", f"{folder}/clips"])
    print(f"=== {name} exit {code}", file=sys.stderr, flush=True)
"""


def test_an_error_raised_in_a_flow_task_is_one_line_of_its_kind(story_task, tmp_path):
    result = subprocess.run([sys.executable, "-c", COMMANDS, json.dumps(PLANTED), str(story_task), str(tmp_path)],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    outputs = re.split(r"^=== (\S+) exit (\d+)$", result.stderr, flags=re.M)
    runs = {name: (int(code), err) for err, name, code in zip(outputs[0::3], outputs[1::3], outputs[2::3])}
    assert list(runs) == list(PLANTED), result.stderr
    for name, (_, message, code, kind) in PLANTED.items():
        exit_code, err = runs[name]
        lines = [line for line in err.splitlines() if line.strip()]
        assert exit_code == code, (name, err)
        # the run's INFO lines and progress stay; of the failure, only the CLI's own line
        assert "Traceback" not in err and "| ERROR" not in err and "Failed(" not in err, (name, err)
        assert [line for line in lines if re.search(r"error:|Error\b", line)] == lines[-1:], (name, err)
        assert lines[-1].startswith(f"s2sbench build: {kind} error: ") and "planted" in lines[-1], (name, err)
