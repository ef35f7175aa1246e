"""Chromium (Debian) registers and signs in against Sesame's WebAuthn library.

A minimal page (browser/index.html + app.js) served by a tiny Python server (browser/server.py) on
http://localhost:PORT gets options with random challenges, calls navigator.credentials.create/get with Chromium's
virtual authenticator, and posts `credential.toJSON()` back. The server verifies with `$SESAME_BIN verify
registration` / `verify authentication` (the library under test); py_webauthn checks the same responses as a peer,
so a disagreement between the two shows up. Parametrised over ctap2 (packed attestation) and ctap1/u2f
(fido-u2f), resident keys on and off, user verification on and off.
"""

import json
import subprocess
import tempfile

import pytest
import webauthn
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

from browser.server import RelyingPartyServer
from conftest import b64url_decode

def flag(result: dict, name: str) -> bool:
    """A flag from `sesame verify` output (`"flags": {"up", "uv", "be", "bs", "at", "ed"}`)."""
    flags = result.get("flags")
    assert isinstance(flags, dict) and name in flags, f"verify output has no {name} flag: {result}"
    return flags[name]


class SesameVerifier:
    """Runs `sesame verify` on each browser response, and py_webauthn on the same response as a cross-check."""

    def __init__(self, sesame_bin: str, origin: str, rp_id: str):
        self.sesame_bin, self.origin, self.rp_id = sesame_bin, origin, rp_id
        self.registrations = []  # (response, challenge) of every registration seen

    def run(self, kind: str, response: dict, args: list, origin=None):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(response, f)
        # `--name=value`: base64url values may start with "-", which would read as an option.
        command = [self.sesame_bin, "verify", kind, f"--rp-id={self.rp_id}", f"--origin={origin or self.origin}",
                   *args, f.name]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        try:
            result = json.loads(done.stdout)
        except json.JSONDecodeError:
            result = {"ok": False, "error": "no JSON output", "stderr": done.stderr, "status": done.returncode}
        result["exitStatus"] = done.returncode
        return result

    def registration(self, response: dict, challenge: str, require_uv: bool) -> dict:
        self.registrations.append((response, challenge))
        peer = webauthn.verify_registration_response(
            credential=response, expected_challenge=b64url_decode(challenge), expected_rp_id=self.rp_id,
            expected_origin=self.origin, require_user_verification=require_uv)
        result = self.run("registration", response, [f"--challenge={challenge}"] + (["--require-uv"] if require_uv else []))
        result["peer"] = {"fmt": str(peer.fmt), "signCount": peer.sign_count, "userVerified": peer.user_verified}
        return result

    def authentication(self, response: dict, challenge: str, credential: dict, require_uv: bool) -> dict:
        peer = webauthn.verify_authentication_response(
            credential=response, expected_challenge=b64url_decode(challenge), expected_rp_id=self.rp_id,
            expected_origin=self.origin, credential_public_key=b64url_decode(credential["credentialPublicKey"]),
            credential_current_sign_count=credential["signCount"], require_user_verification=require_uv)
        result = self.run("authentication", response, [
            f"--challenge={challenge}", f"--public-key={credential['credentialPublicKey']}",
            f"--sign-count={credential['signCount']}"] + (["--require-uv"] if require_uv else []))
        result["peer"] = {"signCount": peer.new_sign_count, "userVerified": peer.user_verified}
        return result


CASES = [
    # protocol, resident key, user verification, expected fmt
    pytest.param(Protocol.CTAP2, True, True, "packed", id="ctap2-rk-uv"),
    pytest.param(Protocol.CTAP2, True, False, "packed", id="ctap2-rk-no-uv"),
    pytest.param(Protocol.CTAP2, False, True, "packed", id="ctap2-no-rk-uv"),
    pytest.param(Protocol.CTAP2, False, False, "packed", id="ctap2-no-rk-no-uv"),
    pytest.param(Protocol.U2F, False, False, "fido-u2f", id="u2f"),
]


def call(driver, function: str, params: dict) -> dict:
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        f"window.{function}(arguments[0]).then(done, e => done({{ok: false, error: 'browser: ' + e.name + ': ' + e.message}}));",
        params)
    assert isinstance(result, dict), result
    return result


@pytest.mark.parametrize("protocol, resident_key, user_verification, fmt", CASES)
def test_chromium_registers_and_signs_in(chromium, sesame_bin, port, protocol, resident_key, user_verification, fmt):
    verifier = SesameVerifier(sesame_bin, f"http://localhost:{port}", "localhost")
    with RelyingPartyServer(port, verifier.registration, verifier.authentication) as server:
        chromium.get(f"{server.origin}/")
        chromium.add_virtual_authenticator(VirtualAuthenticatorOptions(
            protocol=protocol,
            transport=Transport.USB if protocol == Protocol.U2F else Transport.INTERNAL,
            has_resident_key=resident_key,
            has_user_verification=user_verification,
            is_user_consenting=True,
            is_user_verified=user_verification,
        ))
        try:
            uv = "required" if user_verification else "discouraged"
            registered = call(chromium, "sesameRegister", {
                "residentKey": "required" if resident_key else "discouraged", "userVerification": uv,
                "attestation": "direct"})
            assert registered.get("ok") is True, registered
            assert registered["exitStatus"] == 0
            assert registered["fmt"] == fmt == registered["peer"]["fmt"]
            # Chromium's virtual authenticators sign with an attestation certificate (x5c), and no trust anchor
            # is given here, so the chain is reported but not verified.
            assert registered["attestationType"] == "basic"
            assert registered.get("chainVerified") is False
            assert flag(registered, "up") is True
            assert flag(registered, "uv") is user_verification is registered["peer"]["userVerified"]
            assert flag(registered, "be") is False and flag(registered, "bs") is False
            assert registered["signCount"] == registered["peer"]["signCount"]
            assert registered["credentialId"] == verifier.registrations[-1][0]["rawId"]

            # The same browser response must be refused for another origin and for another challenge.
            response, challenge = verifier.registrations[-1]
            other = verifier.run("registration", response, [f"--challenge={challenge}"], origin="http://localhost:1")
            assert other["ok"] is False and other["exitStatus"] == 1, other
            other = verifier.run("registration", response, ["--challenge=" + "A" * 43])
            assert other["ok"] is False and other["exitStatus"] == 1, other

            # Chromium protects discoverable credentials with credProtect (UV optional with a credential ID list),
            # so an authenticator without UV can only use them when the server lists them.
            discoverable = resident_key and user_verification
            previous = registered["signCount"]
            for _ in range(2):
                signed_in = call(chromium, "sesameSignIn", {"discoverable": discoverable, "userVerification": uv})
                assert signed_in.get("ok") is True, signed_in
                assert signed_in["exitStatus"] == 0
                assert flag(signed_in, "up") is True
                assert flag(signed_in, "uv") is user_verification
                assert signed_in["signCount"] == signed_in["peer"]["signCount"]
                assert signed_in["signCount"] > previous or signed_in["signCount"] == previous == 0
                previous = signed_in["signCount"]
        finally:
            chromium.remove_virtual_authenticator()
