"""`sesame keychain` against a real `sesame serve` ($SESAME_BIN for both): two devices enroll with one account,
join, sync and merge through the server's keychain endpoints; a passkey the keychain made on one device signs in
on the other through the server's own sign-in and shows as "Sesame Keychain", synced; after both devices' files
are deleted, the recovery key restores everything, and a wrong recovery key or passphrase changes nothing. Then
every table the server wrote is read back (SQLite file) and holds no plaintext of any item.

Runs on SQLite, and on PostgreSQL too when SESAME_TEST_POSTGRES_URL is set (the no-plaintext scan reads the
SQLite file, so it runs there only)."""

import json
import os
import re
import shutil
import sqlite3
import time
import urllib.error
import urllib.request

import pytest

from conftest import b64url_decode
from test_keychain_cli import PASSPHRASE, Vault, binary, error_code, needs_suffix_list, snapshot  # noqa: F401
from test_server import DATABASES, Server

ORIGIN = "http://localhost:8080"


class Client:
    """A native client of the server: keeps the ceremony token between a ceremony's two steps."""

    def __init__(self, server):
        self.server = server
        self.ceremony = None

    def request(self, method, path, body=None, token=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.server.base + path, data=data, method=method)
        request.add_header("Sesame-Client", "native")
        if body is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        if self.ceremony:
            request.add_header("Sesame-Ceremony", self.ceremony)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                self.ceremony = response.headers.get("Sesame-Ceremony") or self.ceremony
                raw = response.read()
                return response.status, json.loads(raw) if raw[:1] in (b"{", b"[") else raw
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, json.loads(raw) if raw[:1] == b"{" else raw


class Device(Vault):
    """A keychain directory that syncs with the server it enrolled with."""

    def __init__(self, binary, path, server):
        super().__init__(binary, path)
        self.server = server

    def run(self, *args, env=None, **options):
        environment = {"SESAME_KEYCHAIN_SERVER": self.server.base, **(env or {})}
        return super().run(*args, env=environment, **options)

    def enroll(self, session_token, name):
        self.ok("enroll", "--device-name", name, env={"SESAME_SESSION_TOKEN": session_token})

    def webauthn(self, ceremony, options):
        result = self.run("webauthn", ceremony, "--origin", ORIGIN, "--options", "-", input=json.dumps(options))
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def sign_up_with_keychain(client, device, username):
    """Passkey sign-up on the server with a passkey the keychain makes; returns the session token."""
    status, options = client.request("POST", "/api/registration/options", {"username": username})
    assert status == 200, options
    status, body = client.request("POST", "/api/registration", {"credential": device.webauthn("create", options)})
    assert status == 201, body
    return body["sessionToken"]


def sign_in_with_keychain(client, device):
    status, options = client.request("POST", "/api/authentication/options", {})
    assert status == 200, options
    status, body = client.request("POST", "/api/authentication", {"credential": device.webauthn("get", options)})
    assert status == 200, body
    return body["sessionToken"]


@pytest.fixture(params=DATABASES)
def server(request, binary, tmp_path):
    (tmp_path / "server").mkdir()
    s = Server(binary, tmp_path / "server", request.param)
    s.kind = request.param
    yield s
    if s.process.poll() is None:
        s.stop()
    s.drop_database()


def test_two_devices_sync_through_sesame_serve_and_recover(binary, server, tmp_path):
    needs_suffix_list()
    client = Client(server)
    name = "k" + os.urandom(4).hex()

    # Device A makes the vault, the account's passkey (signing up with it), and enrolls.
    a = Device(binary, tmp_path / "a", server)
    unenrolled = a.run("init", "--device-name", "A", passphrase=PASSPHRASE)
    assert unenrolled.returncode == 1 and error_code(unenrolled) == "syncNotConfigured", unenrolled.stderr
    assert not a.file.exists()
    refused = a.run("enroll", "--device-name", "A", env={"SESAME_SESSION_TOKEN": "x" * 43})
    assert refused.returncode == 1 and error_code(refused) == "notEnrolled", refused.stderr
    scratch = Vault(binary, tmp_path / "scratch")  # makes the first passkey before any account exists
    scratch.init(name="scratch")
    token = sign_up_with_keychain(client, Device(binary, scratch.path, server), name)
    a.enroll(token, "A")
    a.init(name="A")
    first = a.add_password("example.com", "alice", "shared-secret-pw")
    code = a.add_code("otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
    a.ok("sync")

    # B enrolls (the person signs in again), asks to join, A approves, B finishes.
    b = Device(binary, tmp_path / "b", server)
    b.enroll(sign_in_with_keychain(client, Device(binary, scratch.path, server)), "B")
    qr = tmp_path / "join.png"
    qr.write_bytes(b"an existing file")
    refused = b.run("join", "--device-name", "B", "--qr", qr, passphrase=PASSPHRASE)
    assert refused.returncode == 2 and "exists" in refused.stderr and qr.read_bytes() == b"an existing file"
    assert not b.file.exists()
    joining = b.ok("join", "--device-name", "B", "--qr", qr, "--force", passphrase=PASSPHRASE)
    assert qr.read_bytes().startswith(b"\x89PNG")
    pairing = re.search(r"^Pairing code: (\S+)$", joining, re.M).group(1)
    pending = b.run("join", passphrase=PASSPHRASE)
    assert pending.returncode == 1 and error_code(pending) == "joinPending"
    a.ok("approve", pairing, "--name", "B")
    assert "Joined: 2 items" in b.ok("join", passphrase=PASSPHRASE)
    b.ok("unlock", passphrase=PASSPHRASE)
    assert b.show("example.com", reveal=True)["password"] == "shared-secret-pw"

    # A passkey made on A signs in on B, through the server's own sign-in, and shows as Sesame Keychain, synced.
    status, options = client.request("POST", "/api/account/passkeys/options", {}, token=token)
    assert status == 200, options
    status, added = client.request("POST", "/api/account/passkeys", {"credential": a.webauthn("create", options)},
                                   token=token)
    assert status in (200, 201), added
    a.ok("sync")
    b.ok("sync")
    shutil.rmtree(scratch.path)  # the sign-up passkey's device is gone: only A's passkey, synced to B, remains
    b_session = sign_in_with_keychain(client, b)
    status, passkeys = client.request("GET", "/api/account/passkeys", token=b_session)
    assert status == 200, passkeys
    listed = passkeys["passkeys"] if isinstance(passkeys, dict) else passkeys
    assert len(listed) == 2
    for passkey in listed:
        assert passkey["provider"] == "Sesame Keychain" and passkey["aaguid"] == "fbae9a5b-c577-444c-ab08-4fbf3dadd3a1"
        assert passkey["backupEligible"] is True and passkey["backedUp"] is True

    # The same item changed on both while B is offline: different fields both survive; A's deletion of another
    # item and B's addition both arrive (docs/keychain.md, "Merging").
    a.ok("edit", first, "--username", "alice@example.com", "--add-site", "a.example")
    a.ok("delete", code, "--yes")
    b.ok("edit", first, "--password-stdin", input="changed-on-b\n")
    b.add_password("b-only.example", "bob-the-builder", "pw-b")
    a.ok("sync")
    b.ok("sync")
    a.ok("sync")
    for device in (a, b):
        shown = device.show(first, reveal=True)
        assert (shown["username"], shown["password"]) == ("alice@example.com", "changed-on-b")
        assert sorted(shown["sites"]) == ["a.example", "example.com"]
        titles = sorted(i["title"] for i in device.items("--kind", "password"))
        assert titles == ["b-only.example — bob-the-builder", "example.com, a.example — alice@example.com"]
        assert [i["kind"] for i in device.items()].count("passkey") == 1

    # Every device lost. A wrong recovery key or passphrase changes nothing, here or on the server.
    database_before = server_state(server)
    c = Device(binary, tmp_path / "c", server)
    c.enroll(sign_in_with_keychain(client, b), "C")
    shutil.rmtree(a.path)
    shutil.rmtree(b.path)
    other = Vault(binary, tmp_path / "other")
    other.init(unlock=False)
    before = snapshot(c.path)
    wrong = c.run("recover", "--recovery-key-file", "-", passphrase=PASSPHRASE, input=other.recovery_key + "\n")
    assert wrong.returncode == 1 and error_code(wrong) == "wrongRecoveryKey", wrong.stderr
    assert snapshot(c.path) == before and not c.file.exists()
    assert server_state(server) == database_before
    key_file = tmp_path / "recovery"
    key_file.write_text(a.recovery_key + "\n")
    recovered = c.ok("recover", "--recovery-key-file", key_file, "--device-name", "C", passphrase=PASSPHRASE)
    assert "Recovered: 3 items" in recovered
    locked = snapshot(c.path)
    wrong_passphrase = c.run("list", passphrase="not the passphrase at all")
    assert wrong_passphrase.returncode == 1 and error_code(wrong_passphrase) == "wrongPassphrase"
    assert snapshot(c.path) == locked
    c.ok("unlock", passphrase=PASSPHRASE)
    assert c.show(first, reveal=True)["password"] == "changed-on-b"
    sign_in_with_keychain(client, c)

    if server.kind == "sqlite":
        # The passkeys' private keys, from a CXF export (the only way they leave a vault): their P-256 scalars.
        export = tmp_path / "export.cxf"
        c.ok("export", "--cxf", export, passphrase=PASSPHRASE)
        scalars = private_scalars(json.loads(export.read_text()))
        assert len(scalars) == 1
        assert_no_plaintext(server, scalars + [
            b"shared-secret-pw", b"changed-on-b", b"pw-b", b"JBSWY3DPEHPK3PXP", b"alice@example.com",
            b"bob-the-builder", b"example.com", b"b-only.example", b"a.example", b"Example",
        ])


def private_scalars(document):
    """The 32-byte private scalars of the ES256 passkeys in a CXF document (PKCS #8: `04 20` then the scalar)."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "passkey" and "key" in value:
                der = b64url_decode(value["key"])
                at = der.find(b"\x04\x20")
                assert at > 0
                found.append(der[at + 2:at + 34])
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(document)
    return found


def server_state(server):
    """The keychain tables' rows, for "nothing changed" checks (SQLite only; None on PostgreSQL)."""
    if server.kind != "sqlite":
        return None
    with sqlite3.connect(f"file:{server.database}?mode=ro", uri=True) as db:
        return {table: sorted(map(repr, db.execute(f"SELECT * FROM {table}").fetchall()))
                for table in ("keychain_vaults", "keychain_records", "keychain_wraps", "keychain_devices",
                              "keychain_shares")}


def assert_no_plaintext(server, secrets):
    """Every row of every table the server wrote, as bytes (the WAL checkpointed first), holds none of `secrets`;
    neither does the raw file. The keychain's private keys never leave a device, so they cannot be here either:
    the vault files of the devices are compared too."""
    with sqlite3.connect(server.database) as db:
        db.execute("PRAGMA wal_checkpoint(FULL)")
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert "keychain_records" in tables and "keychain_vaults" in tables
        rows = 0
        for table in tables:
            for row in db.execute(f"SELECT * FROM {table}"):
                rows += 1
                for value in row:
                    data = value if isinstance(value, bytes) else str(value).encode()
                    for secret in secrets:
                        assert secret not in data, f"{secret!r} in {table}"
        assert rows > 0
        records = db.execute("SELECT COUNT(*) FROM keychain_records").fetchone()[0]
        assert records >= 3
    raw = open(server.database, "rb").read()
    for secret in secrets:
        assert secret not in raw, f"{secret!r} in the database file"
