"""The short version of scripts/faults (issue 13): ten kill -9 rounds under load and six during passkey additions and
TOTP confirmations on each engine; PostgreSQL stopped under load, and frozen (SIGSTOP) for 4 s with a 1 s deadline; a full disk under SQLite; 10,000 idle and 300 slow
clients held for 3 s; two nodes behind HAProxy with one killed (6 s of load). The full run
(`scripts/faults --kills 200`) writes docs/reliability.md."""

import os
import subprocess
import sys

import pytest

from conftest import ROOT

# Latency goals under attack and under load: scripts/test runs this file on its own, after the others.
pytestmark = pytest.mark.alone


def test_faults_short_run_loses_nothing(sesame_bin):
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "faults"), "--bin", sesame_bin, "--kills", "10",
         "--addition-kills", "6", "--hold-seconds", "3", "--failover-seconds", "6", "--freeze-seconds", "4",
         "--database-timeout", "1", "--no-report"],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "sqlite kill:" in done.stdout and "postgres kill:" in done.stdout
    assert "postgres database down:" in done.stdout and "postgres database frozen:" in done.stdout
    assert "sqlite kill during additions:" in done.stdout and "postgres kill during additions:" in done.stdout
    assert "sqlite disk full:" in done.stdout and "sqlite slow clients:" in done.stdout
    assert "postgres two nodes:" in done.stdout
    assert '"lost": 0' in done.stdout and "PROBLEM" not in done.stdout
