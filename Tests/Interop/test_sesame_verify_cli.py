"""`sesame verify` and `sesame inspect` on the real-authenticator corpus: exit codes (0 verified, 1 refused,
2 bad usage) and the JSON output contract other tools (the Chromium test, scripts) rely on.

The cases are the corpus copies in Tests/WebAuthnTests/Vectors/webauthn-real/ (each names its source), plus the
cases read in place from the shared corpus beside the repository (../shared/corpus, or $SESAME_SHARED_CORPUS): those
whose only source is MPL-2.0 (kanidm/webauthn-rs) are not copied here (NOTICE)."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "Tests" / "WebAuthnTests" / "Vectors" / "webauthn-real"
SESAME = os.environ.get("SESAME_BIN", str(ROOT / ".build" / "debug" / "sesame"))
SHARED = pathlib.Path(os.environ.get("SESAME_SHARED_CORPUS", ROOT.parent / "shared" / "corpus")) / "webauthn-real"
IN_PLACE = sorted(p for p in SHARED.glob("webauthn-rs-*.json") if not (CORPUS / p.name).exists()) if SHARED.is_dir() else []
CASES = sorted(list(CORPUS.glob("*.json")) + IN_PLACE, key=lambda p: p.name)


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"the shared corpus ({SHARED}) is absent: its in-place webauthn-rs cases were not checked")
def test_in_place_cases_are_read():
    assert len(IN_PLACE) >= 28

# Formats and algorithms that come with a later issue: refused with a typed error for now.
LATER_FORMATS = {"tpm", "android-key", "android-safetynet"}
# rawId differs from the authenticator data's credential ID; issue 2 requires refusing that.
ID_MISMATCH = {"fido2-net-lib-apple-reg.json", "webauthn-rs-android-key-reg.json"}


def run(*args, stdin=None):
    return subprocess.run([SESAME, *args], capture_output=True, text=True, input=stdin, timeout=60)


def command_for(case, response_path):
    if case["ceremony"] == "registration":
        cmd = ["verify", "registration", "--rp-id", case["rpId"], "--origin", case["origin"],
               "--challenge", case["challenge"]]
        for pem_index, pem in enumerate(case.get("trustAnchorsPEM") or []):
            path = response_path.parent / f"anchor{pem_index}.pem"
            path.write_text(pem)
            cmd += ["--trust-anchor", str(path)]
        if case.get("verificationTime"):
            cmd += ["--at", case["verificationTime"]]
        for alg in case.get("allowedAlgorithms") or []:
            cmd += ["--allow-algorithm", str(alg)]
    else:
        cmd = ["verify", "authentication", "--rp-id", case["rpId"], "--origin", case["origin"],
               "--challenge", case["challenge"], "--public-key", case["credentialPublicKey"],
               "--sign-count", str(case["storedSignCount"])]
        if case.get("appid"):
            cmd += ["--appid", case["appid"]]
    if case.get("requireUserVerification"):
        cmd.append("--require-uv")
    return cmd + [str(response_path)]


def fmt_of(case):
    if case["ceremony"] != "registration":
        return None
    out = run("inspect", "--json", "-", stdin=json.dumps(case["response"]))
    return json.loads(out.stdout)["attestationObject"]["fmt"]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_verify_corpus_case(path, tmp_path):
    case = json.loads(path.read_text())
    response_path = tmp_path / "response.json"
    response_path.write_text(json.dumps(case["response"]))
    result = run(*command_for(case, response_path))
    assert result.returncode in (0, 1), result.stderr
    output = json.loads(result.stdout)
    expected = case["expected"]
    fmt = fmt_of(case)
    if path.name in ID_MISMATCH:
        assert (result.returncode, output["error"]) == (1, "credentialIdMismatch")
    elif "mldsa" in path.name:
        assert (result.returncode, output["error"]) == (1, "unsupportedAlgorithm")
    elif fmt in LATER_FORMATS:
        assert (result.returncode, output["error"]) == (1, "unsupportedAttestationFormat")
    elif expected["ok"]:
        assert result.returncode == 0, output
        assert output["ok"] is True
        assert output["credentialId"] == expected["credentialId"]
        assert output["signCount"] == expected["signCount"]
        assert set(output["flags"]) == {"up", "uv", "be", "bs", "at", "ed"}
        if case["ceremony"] == "registration":
            assert output["fmt"] == expected["fmt"]
            assert output["attestationType"] == expected["attestationType"]
            assert output["credentialPublicKey"] == expected["credentialPublicKey"]
            assert output["aaguid"] == expected["aaguid"]
    else:
        assert result.returncode == 1
        assert output["ok"] is False and output["error"] and output["step"]


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_inspect_corpus_case(path):
    case = json.loads(path.read_text())
    result = run("inspect", "--json", "-", stdin=json.dumps(case["response"]))
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["kind"] == case["ceremony"]
    assert report["clientData"]["origin"] == case["origin"]
    text = run("inspect", "-", stdin=json.dumps(case["response"]))
    assert text.returncode == 0 and "clientData.origin" in text.stdout


def test_inspect_bare_parts():
    case = json.loads((CORPUS / "yubico-yubikey-5-nfc-reg.json").read_text())
    attestation_object = case["response"]["response"]["attestationObject"]
    report = json.loads(run("inspect", "--json", "-", stdin=attestation_object).stdout)
    assert report["kind"] == "attestationObject"
    assert report["attestationObject"]["fmt"] == "packed"
    assert report["attestationObject"]["certificates"][0]["subject"]
    client_data = case["response"]["response"]["clientDataJSON"]
    report = json.loads(run("inspect", "--json", "-", stdin=client_data).stdout)
    assert report["clientData"]["type"] == "webauthn.create"


def test_bad_usage_exits_2(tmp_path):
    response = tmp_path / "r.json"
    response.write_text("{}")
    bad_challenge = run("verify", "registration", "--rp-id", "example.org", "--origin", "https://example.org",
                        "--challenge", "AA==", str(response))
    assert bad_challenge.returncode == 2
    bad_origin = run("verify", "registration", "--rp-id", "example.org", "--origin", "example.org",
                     "--challenge", "AAAA", str(response))
    assert bad_origin.returncode == 2
    missing_file = run("verify", "registration", "--rp-id", "example.org", "--origin", "https://example.org",
                       "--challenge", "AAAA", str(tmp_path / "absent.json"))
    assert missing_file.returncode == 2
    missing_option = run("verify", "registration", "--origin", "https://example.org", "--challenge", "AAAA",
                         str(response))
    assert missing_option.returncode == 2
    unknown_option = run("verify", "authentication", "--no-such-option", str(response))
    assert unknown_option.returncode == 2


def test_malformed_response_is_a_failed_verification(tmp_path):
    response = tmp_path / "r.json"
    response.write_text('{"id":"AA==","rawId":"AA","type":"public-key","response":{}}')
    result = run("verify", "registration", "--rp-id", "example.org", "--origin", "https://example.org",
                 "--challenge", "AAAA", str(response))
    assert result.returncode == 1
    assert json.loads(result.stdout)["ok"] is False


def _b64url(data):
    import base64
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64url(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_mutated_inputs_never_crash(tmp_path):
    """Bit flips and truncations of real attestation objects and authenticator data: inspect and verify answer
    0 or 1 (a typed refusal), never a crash (negative status = killed by a signal)."""
    import random
    rng = random.Random(0x5E5A)
    cases = [json.loads(p.read_text()) for p in CASES]
    for round_ in range(120):
        case = rng.choice(cases)
        inner = case["response"]["response"]
        field = "attestationObject" if "attestationObject" in inner else "authenticatorData"
        data = bytearray(_unb64url(inner[field]))
        if round_ % 3 == 2:
            data = data[: rng.randrange(len(data))]
        else:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        inspected = run("inspect", "--json", "-", stdin=_b64url(bytes(data)))
        assert inspected.returncode in (0, 1), (case["source"], inspected.returncode, inspected.stderr[-300:])
        response = json.loads(json.dumps(case["response"]))
        response["response"][field] = _b64url(bytes(data))
        response_path = tmp_path / "mutated.json"
        response_path.write_text(json.dumps(response))
        verified = run(*command_for(case, response_path))
        assert verified.returncode in (0, 1), (case["source"], verified.returncode, verified.stderr[-300:])
