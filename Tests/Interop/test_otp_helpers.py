"""Shared helpers for the one-time code interop tests: finding and running the `sesame` binary."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def sesame_bin() -> str:
    path = os.environ.get("SESAME_BIN") or str(ROOT / ".build" / "debug" / "sesame")
    if not os.access(path, os.X_OK):
        pytest.skip(f"sesame binary not found at {path}; run `swift build` or scripts/test (sets SESAME_BIN)")
    return path


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sesame_bin(), "otp", *args], capture_output=True, text=True, input=stdin, timeout=60
    )


def new_key(**options: str) -> tuple[str, str, str]:
    """Runs `sesame otp new`; returns (secret, otpauth link, apple-otpauth link or '')."""
    args = []
    for name, value in options.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    result = run("new", *args)
    assert result.returncode == 0, result.stderr
    secret = re.search(r"^Secret:\s+(\S+)$", result.stdout, re.M).group(1)
    otpauth = re.search(r"^otpauth link:\s+(\S+)$", result.stdout, re.M).group(1)
    apple = re.search(r"^Apple link:\s+(\S+)$", result.stdout, re.M)
    return secret, otpauth, apple.group(1) if apple else ""
