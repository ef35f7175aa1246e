"""scripts/bench-server (wrk + bench-signin.lua) against the built `sesame` (SESAME_BIN) on SQLite, for two seconds
per sign-in variant and for sign-up: it must complete sign-ins with no error, and it must report failing sign-ins as a failed
run, so the benchmark cannot rot unnoticed."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (scripts/test installs it)")


def bench(sesame_bin, tmp_path, *extra):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench-server"), "--bin", sesame_bin, "--database", "sqlite",
         "--seconds", "2", "--threads", "2", "--accounts", "4", "--raw-verify", "none", "--no-openssl",
         "--json", str(out), *extra],
        capture_output=True, text=True, timeout=120,
    )
    figures = json.loads(out.read_text()) if out.exists() else None
    return done, figures


def test_sign_ins_complete_without_errors(sesame_bin, tmp_path):
    done, figures = bench(sesame_bin, tmp_path, "--wide", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(run["database"], run["mode"], run["connections"]) for run in figures["runs"]] == [
        ("sqlite", "discoverable", 2), ("sqlite", "username", 2), ("sqlite", "signup", 2),
        ("sqlite", "discoverable@4", 4)]
    for run in figures["runs"]:
        if shutil.which("cc"):
            # The allocation counter (LD_PRELOAD) answered: a sign-in allocates, so the count cannot be zero.
            assert run["allocations_per_sign_in"] > 0, run
        assert run["sign_ins"] > 0, run
        assert run["sign_ins_per_second"] > 0, run
        assert run["non_2xx"] == run["error_responses"] == run["parse_errors"] == run["socket_errors"] == 0, run
        # Every sign-in (or sign-up) is two requests (options + verify); wrk also counts requests cut off at the end.
        assert run["requests"] >= 2 * run["sign_ins"], run
        assert 0 < run["signin_p50_ms"] <= run["signin_p99_ms"] <= run["signin_max_ms"], run


def test_refused_sign_ins_fail_the_run(sesame_bin, tmp_path):
    # clientDataJSON naming another origin: the server refuses every assertion with 400.
    done, figures = bench(
        sesame_bin, tmp_path, "--mode", "discoverable", "--wide", "0", "--client-origin", "https://evil.example")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in done.stderr
    (run,) = figures["runs"]
    assert run["sign_ins"] == 0
    assert run["error_responses"] > 0 and run["non_2xx"] > 0


def test_token_exchanges_complete_without_errors(sesame_bin, tmp_path):
    """--mode tokens: every authorization answers 303 with a code and every exchange 200 with an ID token, and the
    run reports two ES256 token signatures per exchange beside openssl's signing rate."""
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench-server"), "--bin", sesame_bin, "--database", "sqlite",
         "--mode", "tokens", "--seconds", "2", "--threads", "2", "--accounts", "4", "--wide", "0",
         "--raw-verify", "none", "--no-alloc-count", "--json", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["mode"] == "tokens" and run["sign_ins"] > 0, run
    assert run["non_2xx"] == run["error_responses"] == run["parse_errors"] == run["socket_errors"] == 0, run
    assert run["requests"] >= 2 * run["sign_ins"], run
    if shutil.which("openssl"):
        assert "exchanges/s per raw ES256 sign/s" in done.stdout and "token signatures/s" in done.stdout
