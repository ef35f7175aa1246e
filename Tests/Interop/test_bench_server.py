"""scripts/bench-server (wrk + bench-signin.lua) against the built `sesame` (SESAME_BIN) on SQLite, for two seconds
per sign-in variant, for sign-up, for password + TOTP sign-in and for the floor under a request (--mode http): it must complete sign-ins with no error, and it must report failing sign-ins as a failed
run, so the benchmark cannot rot unnoticed. The same for the peer it measures beside Sesame (--peer allauth), whose
virtualenv comes from PyPI (made once under .build-peers/; skipped, with pip's reason, when PyPI cannot be reached)."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (scripts/test installs it)")


def bench(sesame_bin, tmp_path, *extra, peer="none"):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench-server"), "--bin", sesame_bin, "--database", "sqlite",
         "--seconds", "2", "--threads", "2", "--accounts", "4", "--password-accounts", "24", "--raw-verify", "none",
         # scrypt at the server's default cost takes longer than a run in the debug build on a loaded machine.
         "--password-scrypt-log-n", "10", "--no-openssl",
         "--json", str(out), "--peer", peer, *extra],
        capture_output=True, text=True, timeout=1200 if peer != "none" else 120,
    )
    figures = json.loads(out.read_text()) if out.exists() else None
    return done, figures


def test_sign_ins_complete_without_errors(sesame_bin, tmp_path):
    done, figures = bench(sesame_bin, tmp_path, "--wide", "4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [(run["database"], run["mode"], run["connections"]) for run in figures["runs"]] == [
        ("sqlite", "discoverable", 2), ("sqlite", "username", 2), ("sqlite", "signup", 2), ("sqlite", "password", 2),
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
         "--raw-verify", "none", "--no-alloc-count", "--peer", "none", "--json", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert run["mode"] == "tokens" and run["sign_ins"] > 0, run
    assert run["non_2xx"] == run["error_responses"] == run["parse_errors"] == run["socket_errors"] == 0, run
    assert run["requests"] >= 2 * run["sign_ins"], run
    if shutil.which("openssl"):
        assert "exchanges/s per raw ES256 sign/s" in done.stdout and "token signatures/s" in done.stdout


def test_password_and_totp_sign_ins_fail_with_a_wrong_code(sesame_bin, tmp_path):
    """--mode password: the load script's TOTP codes are the server's (every second step above was answered with a
    session); with the secret it was given altered, every code is refused and the run fails."""
    done, figures = bench(sesame_bin, tmp_path, "--mode", "password", "--wide", "0", "--no-alloc-count",
                          "--totp-secret-tamper")
    assert done.returncode == 1, done.stdout + done.stderr
    (run,) = figures["runs"]
    assert run["mode"] == "password" and run["sign_ins"] == 0
    assert run["error_responses"] > 0 and run["non_2xx"] > 0


def test_password_sign_ins_wait_for_the_next_step_when_every_account_used_this_one(sesame_bin, tmp_path):
    """--mode password with one account per thread: once each account's code for this 30-second step was accepted,
    the load script waits for the next step instead of replaying a code (the server refuses a replay, and the run
    would fail), and says so."""
    done, figures = bench(sesame_bin, tmp_path, "--mode", "password", "--wide", "0", "--no-alloc-count",
                          "--password-accounts", "2", "--seconds", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = figures["runs"]
    assert run["non_2xx"] == run["error_responses"] == run["socket_errors"] == 0, run
    # Two accounts, each one sign-in per step; a 3-second run spans at most two steps.
    assert 0 < run["sign_ins"] <= 4, run
    assert "every account used this TOTP step; waiting for the next" in done.stderr + done.stdout


def test_http_floor_answers_every_request(sesame_bin, tmp_path):
    """--mode http --bare none: Sesame's `GET /.well-known/webauthn` over and over, every answer 200, CPU per request
    read from /proc (the bare Hummingbird server beside it is a Benchmarks tool, built only for the full benchmark)."""
    done, figures = bench(sesame_bin, tmp_path, "--mode", "http", "--wide", "0", "--bare", "none")
    assert done.returncode == 0, done.stdout + done.stderr
    (run,) = figures["runs"]
    assert (run["database"], run["mode"]) == ("sesame", "http GET /.well-known/webauthn"), run
    assert run["sign_ins"] > 0 and run["requests"] >= run["sign_ins"], run
    assert run["server_cpu_us_per_sign_in"] > 0, run
    assert run["non_2xx"] == run["error_responses"] == run["socket_errors"] == 0, run
    if shutil.which("cc"):
        assert run["allocations_per_sign_in"] > 0, run


def peer_or_skip(figures):
    """The peer's figures, or a skip with the script's reason when its virtualenv could not be made (PyPI offline)."""
    peer = figures["peer"]
    if "skipped" in peer:
        pytest.skip(f"the allauth peer could not be set up: {peer['skipped']}")
    return peer


def test_peer_allauth_signs_in_without_errors(sesame_bin, tmp_path):
    """--peer allauth: every allauth passkey sign-in (request options, then the signed assertion with its userHandle)
    answers 200 with an authenticated session, and the run reports the peer beside Sesame's discoverable sign-in."""
    done, figures = bench(sesame_bin, tmp_path, "--mode", "discoverable", "--wide", "0", "--no-alloc-count",
                          peer="allauth")
    peer = peer_or_skip(figures)
    assert done.returncode == 0, done.stdout + done.stderr
    assert peer["versions"]["django-allauth"] and peer["versions"]["fido2"], peer
    (run,) = peer["runs"]
    assert run["sign_ins"] > 0 and run["server_cpu_us_per_sign_in"] > 0, run
    assert run["non_2xx"] == run["error_responses"] == run["parse_errors"] == run["socket_errors"] == 0, run
    assert run["requests"] >= 2 * run["sign_ins"], run
    assert peer["ratios"]["sqlite"]["sign_ins_per_core"] > 0, peer
    assert "peer allauth discoverable" in done.stdout and "ratio Sesame (sqlite) ÷ allauth" in done.stdout


def test_peer_allauth_refused_sign_ins_fail_the_run(sesame_bin, tmp_path):
    # clientDataJSON naming another origin: python-fido2 refuses every assertion, and the run fails for the peer too.
    done, figures = bench(sesame_bin, tmp_path, "--mode", "discoverable", "--wide", "0", "--no-alloc-count",
                          "--client-origin", "https://evil.example", peer="allauth")
    peer = peer_or_skip(figures)
    assert done.returncode == 1, done.stdout + done.stderr
    (run,) = peer["runs"]
    assert run["sign_ins"] == 0
    assert run["error_responses"] > 0 and run["non_2xx"] > 0
