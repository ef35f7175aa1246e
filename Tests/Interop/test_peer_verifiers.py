"""Peer verification of Sesame's software authenticator.

`sesame authenticator create/get` (the VirtualAuthenticator target) makes registration and authentication responses
from options generated here; two independent relying-party libraries must accept them:
py_webauthn (`webauthn.verify_registration_response` / `verify_authentication_response`) and python-fido2
(`fido2.server.Fido2Server.register_complete` / `authenticate_complete`, with its packed/none attestation classes).
Negative cases check that both refuse a tampered challenge, a tampered signature, a wrong origin and missing UV,
so these tests can fail; CLI exit statuses are checked too.
"""

import json
import os
import stat

import pytest
import webauthn
from fido2 import cbor
from fido2.attestation import AttestationType, NoneAttestation, PackedAttestation
from fido2.server import Fido2Server
from fido2.webauthn import (
    AttestationConveyancePreference,
    PublicKeyCredentialRpEntity,
    PublicKeyCredentialUserEntity,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse

from conftest import b64url, b64url_decode

RP_ID = "example.com"
ORIGIN = "https://login.example.com"
COSE_ALG = {"es256": -7, "eddsa": -8, "rs256": -257}


def creation_options(challenge: bytes, user_id: bytes, *, uv: bool, discoverable: bool, exclude=()):
    return {
        "rp": {"id": RP_ID, "name": "Example"},
        "user": {"id": b64url(user_id), "name": "alice@example.com", "displayName": "Alice"},
        "challenge": b64url(challenge),
        # Every algorithm offered: --algorithm decides which one the authenticator picks.
        "pubKeyCredParams": [{"type": "public-key", "alg": a} for a in (-7, -8, -257)],
        "timeout": 60000,
        "excludeCredentials": [{"type": "public-key", "id": b64url(c)} for c in exclude],
        "authenticatorSelection": {
            "residentKey": "required" if discoverable else "discouraged",
            "requireResidentKey": discoverable,
            "userVerification": "required" if uv else "discouraged",
        },
        "attestation": "direct",
        "extensions": {"credProps": True},
    }


def request_options(challenge: bytes, *, uv: bool, allow=()):
    return {
        "challenge": b64url(challenge),
        "rpId": RP_ID,
        "allowCredentials": [{"type": "public-key", "id": b64url(c)} for c in allow],
        "userVerification": "required" if uv else "discouraged",
        "timeout": 60000,
    }


def write_json(path, value):
    path.write_text(json.dumps(value))
    return path


def fido2_server(attestation: str) -> Fido2Server:
    """A python-fido2 server that verifies origins exactly and checks the attestation statement with fido2's own
    format classes (packed must be self attestation, none must be none)."""

    def verify_attestation(attestation_object, client_data_hash):
        verifier = {"packed": PackedAttestation(), "none": NoneAttestation()}[attestation_object.fmt]
        result = verifier.verify(attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
        expected = AttestationType.SELF if attestation == "packed" else AttestationType.NONE
        if result.attestation_type != expected:
            raise ValueError(f"attestation type {result.attestation_type}, expected {expected}")

    return Fido2Server(
        PublicKeyCredentialRpEntity(id=RP_ID, name="Example"),
        attestation=AttestationConveyancePreference.DIRECT,
        verify_origin=lambda origin: origin == ORIGIN,
        verify_attestation=verify_attestation,
    )


def uv_requirement(uv: bool):
    return UserVerificationRequirement.REQUIRED if uv else UserVerificationRequirement.DISCOURAGED


def create(run_sesame, tmp_path, *, alg="es256", attestation="none", uv=True, discoverable=True,
           origin=ORIGIN, challenge=None, user_id=None, extra=()):
    challenge = challenge or os.urandom(32)
    user_id = user_id or os.urandom(16)
    options = write_json(tmp_path / "creation.json", creation_options(challenge, user_id, uv=uv, discoverable=discoverable))
    args = ["authenticator", "create", "--origin", origin, "--options", options, "--store", tmp_path / "store.json",
            "--algorithm", alg, "--attestation", attestation, *extra]
    if not uv:
        args.append("--no-uv")
    result = run_sesame(*args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), challenge, user_id


def get(run_sesame, tmp_path, *, uv=True, allow=(), origin=ORIGIN, challenge=None):
    challenge = challenge or os.urandom(32)
    options = write_json(tmp_path / "request.json", request_options(challenge, uv=uv, allow=allow))
    args = ["authenticator", "get", "--origin", origin, "--options", options, "--store", tmp_path / "store.json"]
    if not uv:
        args.append("--no-uv")
    result = run_sesame(*args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), challenge


@pytest.mark.parametrize("discoverable", [True, False], ids=["discoverable", "server-side"])
@pytest.mark.parametrize("uv", [True, False], ids=["uv", "no-uv"])
@pytest.mark.parametrize("attestation", ["none", "packed"])
@pytest.mark.parametrize("alg", ["es256", "eddsa", "rs256"])
def test_both_peers_accept_registration_and_authentication(run_sesame, tmp_path, alg, attestation, uv, discoverable):
    registration, challenge, user_id = create(
        run_sesame, tmp_path, alg=alg, attestation=attestation, uv=uv, discoverable=discoverable)
    raw_id = b64url_decode(registration["rawId"])
    assert registration["response"]["publicKeyAlgorithm"] == COSE_ALG[alg]
    assert registration["clientExtensionResults"] == {"credProps": {"rk": discoverable}}

    # py_webauthn
    verified = webauthn.verify_registration_response(
        credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        require_user_verification=uv)
    assert verified.fmt == attestation
    assert verified.credential_id == raw_id
    assert verified.user_verified is uv
    assert verified.sign_count == 1
    assert verified.credential_backed_up is False

    # python-fido2
    server = fido2_server(attestation)
    user = PublicKeyCredentialUserEntity(id=user_id, name="alice@example.com", display_name="Alice")
    _, state = server.register_begin(
        user, challenge=challenge, user_verification=uv_requirement(uv),
        resident_key_requirement=ResidentKeyRequirement.REQUIRED if discoverable else ResidentKeyRequirement.DISCOURAGED)
    auth_data = server.register_complete(state, registration)
    credential = auth_data.credential_data
    assert credential.credential_id == raw_id
    assert credential.public_key[3] == COSE_ALG[alg]
    assert auth_data.is_user_verified() is uv
    # Both libraries read the same public key.
    assert cbor.decode(verified.credential_public_key) == dict(credential.public_key)

    # Sign in twice (the counter must move), discoverable credentials with an empty allow list.
    sign_count = verified.sign_count
    for _ in range(2):
        assertion, challenge = get(run_sesame, tmp_path, uv=uv, allow=() if discoverable else (raw_id,))
        assert b64url_decode(assertion["rawId"]) == raw_id
        if discoverable:
            assert b64url_decode(assertion["response"]["userHandle"]) == user_id
        else:
            assert "userHandle" not in assertion["response"]

        checked = webauthn.verify_authentication_response(
            credential=assertion, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
            credential_public_key=verified.credential_public_key, credential_current_sign_count=sign_count,
            require_user_verification=uv)
        assert checked.new_sign_count == sign_count + 1
        assert checked.user_verified is uv
        sign_count = checked.new_sign_count

        _, state = server.authenticate_begin(
            credentials=None if discoverable else [credential], user_verification=uv_requirement(uv),
            challenge=challenge)
        assert server.authenticate_complete(state, [credential], assertion).credential_id == raw_id


@pytest.mark.parametrize("alg", ["es256", "eddsa", "rs256"])
def test_both_peers_refuse_a_tampered_challenge(run_sesame, tmp_path, alg):
    registration, challenge, user_id = create(run_sesame, tmp_path, alg=alg, attestation="packed")
    wrong = bytes([challenge[0] ^ 1]) + challenge[1:]
    with pytest.raises(InvalidRegistrationResponse):
        webauthn.verify_registration_response(
            credential=registration, expected_challenge=wrong, expected_rp_id=RP_ID, expected_origin=ORIGIN)
    server = fido2_server("packed")
    user = PublicKeyCredentialUserEntity(id=user_id, name="alice@example.com", display_name="Alice")
    _, state = server.register_begin(user, challenge=wrong)
    with pytest.raises(ValueError):
        server.register_complete(state, registration)

    # Register properly, then sign in with a challenge other than the one the verifiers expect.
    _, state = server.register_begin(user, challenge=challenge)
    credential = server.register_complete(state, registration).credential_data
    verified = webauthn.verify_registration_response(
        credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN)
    assertion, signed_challenge = get(run_sesame, tmp_path)
    expected = os.urandom(32)
    with pytest.raises(InvalidAuthenticationResponse):
        webauthn.verify_authentication_response(
            credential=assertion, expected_challenge=expected, expected_rp_id=RP_ID, expected_origin=ORIGIN,
            credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
    _, state = server.authenticate_begin(credentials=[credential], challenge=expected)
    with pytest.raises(ValueError):
        server.authenticate_complete(state, [credential], assertion)


@pytest.mark.parametrize("alg", ["es256", "eddsa", "rs256"])
def test_both_peers_refuse_a_tampered_signature(run_sesame, tmp_path, alg):
    registration, challenge, user_id = create(run_sesame, tmp_path, alg=alg)
    verified = webauthn.verify_registration_response(
        credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN)
    server = fido2_server("none")
    user = PublicKeyCredentialUserEntity(id=user_id, name="alice@example.com", display_name="Alice")
    _, state = server.register_begin(user, challenge=challenge)
    credential = server.register_complete(state, registration).credential_data

    assertion, challenge = get(run_sesame, tmp_path)
    signature = bytearray(b64url_decode(assertion["response"]["signature"]))
    signature[len(signature) // 2] ^= 0x01
    assertion["response"]["signature"] = b64url(bytes(signature))
    with pytest.raises(InvalidAuthenticationResponse):
        webauthn.verify_authentication_response(
            credential=assertion, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
            credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
    _, state = server.authenticate_begin(credentials=[credential], challenge=challenge)
    with pytest.raises(ValueError):
        server.authenticate_complete(state, [credential], assertion)


def test_both_peers_refuse_another_origin_and_missing_uv(run_sesame, tmp_path):
    # A sibling subdomain may use the RP ID, but the verifiers only accept ORIGIN.
    registration, challenge, user_id = create(run_sesame, tmp_path, origin="https://evil.example.com")
    with pytest.raises(InvalidRegistrationResponse):
        webauthn.verify_registration_response(
            credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN)
    server = fido2_server("none")
    user = PublicKeyCredentialUserEntity(id=user_id, name="alice@example.com", display_name="Alice")
    _, state = server.register_begin(user, challenge=challenge)
    with pytest.raises(ValueError):
        server.register_complete(state, registration)

    (tmp_path / "store.json").unlink()
    registration, challenge, user_id = create(run_sesame, tmp_path, uv=False)
    with pytest.raises(InvalidRegistrationResponse):
        webauthn.verify_registration_response(
            credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
            require_user_verification=True)
    _, state = server.register_begin(user, challenge=challenge, user_verification=UserVerificationRequirement.REQUIRED)
    with pytest.raises(ValueError):
        server.register_complete(state, registration)


def test_store_is_private_and_refusals_exit_1(run_sesame, tmp_path):
    registration, _, user_id = create(run_sesame, tmp_path, alg="eddsa")
    store = tmp_path / "store.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    saved = json.loads(store.read_text())
    assert saved["credentials"][0]["id"] == registration["rawId"]

    # The same credential in excludeCredentials: InvalidStateError, exit 1, store unchanged.
    options = write_json(tmp_path / "again.json", creation_options(
        os.urandom(32), user_id, uv=True, discoverable=True, exclude=[b64url_decode(registration["rawId"])]))
    result = run_sesame("authenticator", "create", "--origin", ORIGIN, "--options", options, "--store", store)
    assert result.returncode == 1
    assert "InvalidStateError" in result.stderr
    assert json.loads(store.read_text()) == saved

    # An origin whose host the RP ID is not a suffix of: SecurityError, exit 1.
    result = run_sesame("authenticator", "create", "--origin", "https://example.org", "--options", options)
    assert result.returncode == 1 and "SecurityError" in result.stderr

    # UV required by the options, authenticator without UV: NotAllowedError, exit 1.
    result = run_sesame("authenticator", "get", "--origin", ORIGIN, "--store", store, "--no-uv", "--options",
                        write_json(tmp_path / "r.json", request_options(os.urandom(32), uv=True)))
    assert result.returncode == 1 and "NotAllowedError" in result.stderr

    # No usable credential: NotAllowedError, exit 1.
    result = run_sesame("authenticator", "get", "--origin", ORIGIN, "--store", store, "--options",
                        write_json(tmp_path / "r.json", request_options(os.urandom(32), uv=False, allow=[b"\x01" * 16])))
    assert result.returncode == 1 and "NotAllowedError" in result.stderr


def test_bad_usage_exits_2(run_sesame, tmp_path):
    missing = tmp_path / "missing.json"
    result = run_sesame("authenticator", "create", "--origin", ORIGIN, "--options", missing)
    assert result.returncode == 2 and "cannot read" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"challenge": 5}')
    result = run_sesame("authenticator", "create", "--origin", ORIGIN, "--options", bad)
    assert result.returncode == 2 and "invalidOptions" in result.stderr
    result = run_sesame("authenticator", "get", "--origin", ORIGIN, "--options", bad, "--store", missing)
    assert result.returncode == 2
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("[]")
    options = write_json(tmp_path / "r.json", request_options(os.urandom(32), uv=False))
    result = run_sesame("authenticator", "get", "--origin", ORIGIN, "--options", options, "--store", corrupt)
    assert result.returncode == 2


def test_options_from_standard_input(run_sesame, tmp_path):
    challenge = os.urandom(32)
    options = json.dumps(creation_options(challenge, os.urandom(8), uv=True, discoverable=True))
    result = run_sesame("authenticator", "create", "--origin", ORIGIN, "--options", "-", input=options)
    assert result.returncode == 0, result.stderr
    registration = json.loads(result.stdout)
    webauthn.verify_registration_response(
        credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        require_user_verification=True)


def test_sesame_verify_accepts_what_the_authenticator_makes(run_sesame, tmp_path):
    """The library (through `sesame verify`) and the authenticator agree on a full round trip, and the library
    refuses the authenticator's output for a wrong challenge."""
    registration, challenge, _ = create(run_sesame, tmp_path, alg="rs256", attestation="packed", uv=True)
    path = write_json(tmp_path / "registration.json", registration)
    result = run_sesame("verify", "registration", f"--rp-id={RP_ID}", f"--origin={ORIGIN}",
                        f"--challenge={b64url(challenge)}", "--require-uv", path)
    assert result.returncode == 0, result.stdout + result.stderr
    verified = json.loads(result.stdout)
    assert verified["ok"] is True and verified["fmt"] == "packed" and verified["attestationType"] == "self"
    assert verified["credentialId"] == registration["rawId"]
    assert verified["flags"]["uv"] is True and verified["signCount"] == 1

    assertion, challenge = get(run_sesame, tmp_path, uv=True)
    path = write_json(tmp_path / "assertion.json", assertion)
    common = [f"--rp-id={RP_ID}", f"--origin={ORIGIN}", f"--public-key={verified['credentialPublicKey']}",
              "--sign-count=1", "--require-uv", path]
    result = run_sesame("verify", "authentication", f"--challenge={b64url(challenge)}", *common)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["signCount"] == 2
    result = run_sesame("verify", "authentication", f"--challenge={b64url(os.urandom(32))}", *common)
    assert result.returncode == 1
    assert json.loads(result.stdout) == {**json.loads(result.stdout), "ok": False, "error": "challengeMismatch"}


def test_argument_errors_exit_2(run_sesame):
    result = run_sesame("authenticator", "create", "--origin", ORIGIN)
    assert result.returncode == 2 and "--options" in result.stderr
    result = run_sesame("authenticator", "get", "--origin", ORIGIN, "--options", "-", "--store", "s", "--bogus")
    assert result.returncode == 2
