"""pyotp (PyPI) against `sesame otp`: each side accepts the other's codes and key URIs.

pyotp is an independent RFC 4226/6238 implementation with its own otpauth: URI parser and builder.
"""

import itertools

import pyotp
import pytest

from test_otp_helpers import new_key, run

ALGORITHMS = ["SHA1", "SHA256", "SHA512"]
DIGITS = [6, 7, 8]
PERIODS = [15, 30, 60]
TIMES = [0, 59, 1_111_111_109, 1_234_567_890, 2_000_000_000, 20_000_000_000]


@pytest.mark.parametrize("algorithm,digits,period", list(itertools.product(ALGORITHMS, DIGITS, PERIODS)))
def test_pyotp_reads_our_uri_and_codes_agree(algorithm, digits, period):
    secret, uri, apple = new_key(
        issuer="example.com", account="alice@example.com", algorithm=algorithm, digits=digits, period=period
    )
    totp = pyotp.parse_uri(uri)
    assert isinstance(totp, pyotp.TOTP)
    assert (totp.secret, totp.digits, totp.interval) == (secret, digits, period)
    assert totp.issuer == "example.com" and totp.name == "alice@example.com"
    assert apple == "apple-" + uri

    for t in TIMES:
        expected_step = t // period
        # pyotp's code is accepted by our verifier, at the step pyotp used.
        theirs = totp.at(t)
        verified = run("verify", uri, theirs, "--at", str(t))
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert verified.stdout.strip() == f"accepted step {expected_step}"
        # Our code is the one pyotp computes and accepts.
        ours = run("code", uri, "--at", str(t))
        assert ours.returncode == 0, ours.stderr
        code = ours.stdout.splitlines()[0]
        assert code == theirs
        assert totp.verify(code, for_time=t)


@pytest.mark.parametrize("algorithm,digits,period", [("SHA1", 6, 30), ("SHA256", 8, 60), ("SHA512", 7, 45)])
def test_we_read_pyotp_uris(algorithm, digits, period):
    digest = {"SHA1": "sha1", "SHA256": "sha256", "SHA512": "sha512"}[algorithm]
    import hashlib

    totp = pyotp.TOTP(pyotp.random_base32(), digits=digits, interval=period, digest=getattr(hashlib, digest))
    uri = totp.provisioning_uri(name="bob@example.com", issuer_name="Example Co")
    for t in TIMES:
        result = run("verify", uri, totp.at(t), "--at", str(t))
        assert result.returncode == 0, uri + result.stdout + result.stderr
        ours = run("code", uri, "--at", str(t))
        assert ours.stdout.splitlines()[0] == totp.at(t)


def test_window_and_replay_with_pyotp_codes():
    _, uri, _ = new_key(issuer="example.com", account="carol@example.com")
    totp = pyotp.parse_uri(uri)
    t = 1_700_000_000
    step = t // 30
    # One step either side is accepted by default, two steps are not.
    assert run("verify", uri, totp.at(t - 30), "--at", str(t)).returncode == 0
    assert run("verify", uri, totp.at(t + 30), "--at", str(t)).returncode == 0
    far = run("verify", uri, totp.at(t - 60), "--at", str(t))
    if totp.at(t - 60) not in {totp.at(t - 30), totp.at(t), totp.at(t + 30)}:
        assert far.returncode == 1
        assert run("verify", uri, totp.at(t - 60), "--at", str(t), "--window", "2").returncode == 0
    # Replay: the code of the last accepted step, or of an earlier one, is refused.
    replay = run("verify", uri, totp.at(t), "--at", str(t), "--last-step", str(step))
    assert replay.returncode == 1 and "refused" in replay.stdout
    fresh = run("verify", uri, totp.at(t + 30), "--at", str(t), "--last-step", str(step))
    assert fresh.returncode == 0 and fresh.stdout.strip() == f"accepted step {step + 1}"


def test_hotp_both_ways():
    hotp = pyotp.HOTP(pyotp.random_base32())
    uri = hotp.provisioning_uri(name="dave", issuer_name="Example", initial_count=7)
    ours = run("code", uri)
    assert ours.returncode == 0 and ours.stdout.splitlines()[0] == hotp.at(7)
    # Look-ahead window of 1 accepts counter 8, not 9.
    assert run("verify", uri, hotp.at(8)).stdout.strip() == "accepted step 8"
    assert run("verify", uri, hotp.at(9)).returncode == 1 or hotp.at(9) in {hotp.at(7), hotp.at(8)}


def test_bare_secret_from_stdin():
    secret = pyotp.random_base32()
    totp = pyotp.TOTP(secret)
    result = run("code", "-", "--at", "1234567890", stdin=secret + "\n")
    assert result.returncode == 0 and result.stdout.splitlines()[0] == totp.at(1234567890)
