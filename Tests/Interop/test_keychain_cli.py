"""`sesame keychain` end to end through the built binary ($SESAME_BIN): vault files that survive every wrong
passphrase and corrupt or foreign file byte for byte, passwords, verification codes checked against pyotp, passkeys
checked by py_webauthn, CXF export and import, and two devices joining, syncing and recovering through a sync
folder. python-fido2 verifies the passkeys too.

Every process runs in a new session without a controlling terminal, so nothing can stop to ask; passphrases come
from the environment, --passphrase-file or --passphrase-fd, never from argv. Vaults are unlocked once and then
used through their session, since each scrypt derivation costs about a second in a debug build."""

import datetime
import hashlib
import json
import os
import pathlib
import pty
import re
import select
import shutil
import signal
import stat
import subprocess
import termios
import time
import uuid

import pyotp
import pytest
import webauthn

from browser_keychain_fixtures import second_site  # noqa: F401 (fixture)
from conftest import ROOT, b64url, b64url_decode

PASSPHRASE = "correct horse battery staple"
RECOVERY_KEY = re.compile(r"^\s+([0-9A-Z]{5}(?:-[0-9A-Z]{5}){10})$", re.M)
RP_ID = "example.com"
ORIGIN = "https://login.example.com"
SUFFIX_LIST = "/usr/share/publicsuffix/public_suffix_list.dat"
KEYCHAIN_AAGUID = "fbae9a5b-c577-444c-ab08-4fbf3dadd3a1"

SUBCOMMANDS = [
    "init", "unlock", "lock", "status", "sync", "list", "show", "edit", "delete", "add-password", "add-code", "code",
    "enroll", "devices", "approve", "refuse", "join", "recover", "export", "import", "share", "accept", "webauthn",
    "webauthn create", "webauthn get",
]


class Vault:
    """One keychain directory driven through the CLI."""

    def __init__(self, binary, path, sync=None):
        self.binary = binary
        self.path = path
        self.sync = sync
        self.recovery_key = None

    @property
    def file(self):
        return self.path / "vault"

    def run(self, *args, passphrase=None, input=None, pass_fds=(), env=None):
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SESAME_KEYCHAIN")}
        environment["SESAME_KEYCHAIN_DIR"] = str(self.path)
        if self.sync is not None:
            environment["SESAME_KEYCHAIN_SYNC_DIR"] = str(self.sync)
        if passphrase is not None:
            environment["SESAME_KEYCHAIN_PASSPHRASE"] = passphrase
        environment.update(env or {})
        return subprocess.run(
            [self.binary, "keychain", *map(str, args)], env=environment, input=input, capture_output=True,
            text=True, timeout=180, start_new_session=True, pass_fds=pass_fds)

    def ok(self, *args, **options):
        result = self.run(*args, **options)
        assert result.returncode == 0, f"keychain {' '.join(map(str, args))}: {result.stderr}"
        return result.stdout

    def init(self, name="laptop", unlock=True):
        out = self.ok("init", "--device-name", name, passphrase=PASSPHRASE)
        self.recovery_key = RECOVERY_KEY.search(out).group(1)
        if unlock:
            self.ok("unlock", passphrase=PASSPHRASE)
        return out

    def items(self, *args):
        return [json.loads(line) for line in self.ok("list", "--json", *args).splitlines()]

    def show(self, query, reveal=False):
        return json.loads(self.ok("show", query, "--json", *(["--reveal"] if reveal else [])))

    def add_code(self, uri, *args):
        out = self.ok("add-code", "-", *args, input=uri + "\n")
        return re.search(r"^Added (\w+) ", out).group(1)

    def add_password(self, site, username, password, *args):
        out = self.ok("add-password", "--site", site, "--username", username, *args, input=password + "\n")
        return re.search(r"^Added (\w+) ", out).group(1)

    def status(self):
        return json.loads(self.ok("status", "--json"))


def snapshot(directory):
    """Every file under `directory` with its bytes, but for the empty lock file and the session, whose last-use
    time every command that opens the vault moves on (that is what the idle lock counts from)."""
    if not directory.exists():
        return None
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*")) if p.is_file() and p.name not in (".lock", "session")
    }


def error_code(result):
    match = re.match(r"error: (\w+):", result.stderr)
    return match.group(1) if match else result.stderr


@pytest.fixture(scope="module")
def binary():
    path = os.environ.get("SESAME_BIN") or str(
        __import__("pathlib").Path(__file__).resolve().parents[2] / ".build" / "debug" / "sesame")
    if not os.access(path, os.X_OK):
        pytest.fail(f"sesame binary not found at {path}: run `swift build` or set SESAME_BIN")
    return path


@pytest.fixture
def vault(binary, tmp_path):
    v = Vault(binary, tmp_path / "vault", sync=tmp_path / "sync")
    v.init()
    return v


@pytest.fixture(scope="module")
def locked_template(binary, tmp_path_factory):
    """A vault holding one password and one code generator, with no session: every command needs the passphrase."""
    v = Vault(binary, tmp_path_factory.mktemp("template") / "vault")
    v.init()
    v.add_password("example.com", "alice", "s3cret-password-of-alice")
    v.add_code("otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
    v.ok("lock")
    return v


@pytest.fixture
def locked_vault(binary, tmp_path, locked_template):
    """A copy of the locked template, for one test to change."""
    shutil.copytree(locked_template.path, tmp_path / "vault")
    return Vault(binary, tmp_path / "vault")


def needs_suffix_list():
    if not os.path.exists(SUFFIX_LIST):
        pytest.skip(f"{SUFFIX_LIST} is missing (Debian package publicsuffix); passkeys check RP IDs against it")


# MARK: Help and usage


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_command_has_help(binary, tmp_path, command):
    result = Vault(binary, tmp_path).run(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert "USAGE: sesame keychain " + command in result.stdout


def test_the_passphrase_is_never_an_argument(binary, tmp_path):
    v = Vault(binary, tmp_path / "v")
    result = v.run("init", "--passphrase", PASSPHRASE)
    assert result.returncode == 2
    assert not v.path.exists()
    for command in SUBCOMMANDS:
        assert "--passphrase <" not in v.run(*command.split(), "--help").stdout


# MARK: The vault file


def test_init_shows_the_recovery_key_once_and_stores_it_nowhere(binary, tmp_path):
    v = Vault(binary, tmp_path / "v")
    out = v.init(unlock=False)
    assert out.count(v.recovery_key) == 1
    assert stat.S_IMODE(os.stat(v.path).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(v.file).st_mode) == 0o600
    assert v.file.read_bytes()[:8] == b"SESAMEKC"
    compact = v.recovery_key.replace("-", "").encode()
    for content in snapshot(v.path).values():
        assert compact not in content and v.recovery_key.encode() not in content
    status = v.run("status", "--json", passphrase=PASSPHRASE)
    assert v.recovery_key not in status.stdout
    # A second init finds the vault and changes nothing.
    before = snapshot(v.path)
    again = v.run("init", passphrase=PASSPHRASE)
    assert again.returncode == 1 and error_code(again) == "vaultExists"
    assert snapshot(v.path) == before


def test_a_short_passphrase_is_refused(binary, tmp_path):
    v = Vault(binary, tmp_path / "v")
    result = v.run("init", passphrase="short")
    assert result.returncode == 2 and error_code(result) == "passphraseTooShort"
    assert not v.file.exists()


def test_passphrase_from_environment_file_and_descriptor(locked_vault, tmp_path):
    v = locked_vault
    secret_file = tmp_path / "passphrase"
    secret_file.write_text(PASSPHRASE + "\n")
    assert "example.com" in v.ok("list", passphrase=PASSPHRASE)
    assert "example.com" in v.ok("list", "--passphrase-file", secret_file)
    read_end, write_end = os.pipe()
    os.write(write_end, (PASSPHRASE + "\r\n").encode())
    os.close(write_end)
    try:
        assert "example.com" in v.ok("list", "--passphrase-fd", read_end, pass_fds=(read_end,))
    finally:
        os.close(read_end)
    # No passphrase and no terminal to ask on: a clear error, not a hang.
    missing = v.run("list")
    assert missing.returncode == 2 and error_code(missing) == "passphraseUnavailable"
    closed = v.run("list", "--passphrase-fd", 9)
    assert closed.returncode == 2 and "--passphrase-fd" in closed.stderr


def spawn_on_terminal(v, *args):
    """Runs `sesame keychain ARGS` with a pseudo-terminal as its controlling terminal; returns (pid, master fd)."""
    environment = {k: val for k, val in os.environ.items() if not k.startswith("SESAME_KEYCHAIN")}
    environment["SESAME_KEYCHAIN_DIR"] = str(v.path)
    pid, master = pty.fork()
    if pid == 0:
        os.execve(v.binary, [v.binary, "keychain", *map(str, args)], environment)
    return pid, master


def read_until(master, text, timeout=30):
    seen = b""
    deadline = time.time() + timeout
    while text.encode() not in seen:
        assert time.time() < deadline, f"no {text!r} on the terminal; saw {seen!r}"
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                chunk = os.read(master, 1024)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def read_rest(master):
    rest = b""
    while True:
        try:
            chunk = os.read(master, 1024)
        except OSError:
            return rest
        if not chunk:
            return rest
        rest += chunk


def test_the_terminal_prompt_hides_the_passphrase(locked_vault):
    pid, master = spawn_on_terminal(locked_vault, "list")
    try:
        read_until(master, "Passphrase: ")
        assert not termios.tcgetattr(master)[3] & termios.ECHO  # echo is off while it is typed
        os.write(master, (PASSPHRASE + "\n").encode())
        output = read_rest(master)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(master)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"example.com" in output
    assert PASSPHRASE.encode() not in output


def test_an_interrupted_prompt_turns_echo_back_on(locked_vault):
    pid, master = spawn_on_terminal(locked_vault, "list")
    try:
        read_until(master, "Passphrase: ")
        assert not termios.tcgetattr(master)[3] & termios.ECHO
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == -signal.SIGTERM
        assert termios.tcgetattr(master)[3] & termios.ECHO
    finally:
        os.close(master)


@pytest.mark.parametrize("command", [
    ["list"], ["status"], ["unlock"], ["code"], ["show", "example.com", "--reveal"], ["delete", "example.com", "--yes"],
    ["export", "--cxf", "{tmp}/out.cxf"],
])
def test_a_wrong_passphrase_changes_nothing(locked_vault, tmp_path, command):
    v = locked_vault
    before = snapshot(v.path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    result = v.run(*args, passphrase="not the passphrase at all")
    if command == ["status"]:
        # Without a session, status only shows the contents when the passphrase opens the vault.
        assert result.returncode == 1 and error_code(result) == "wrongPassphrase"
    else:
        assert result.returncode == 1 and error_code(result) == "wrongPassphrase", result.stderr
    assert snapshot(v.path) == before
    assert "s3cret" not in result.stdout + result.stderr
    assert not (tmp_path / "out.cxf").exists()


def flip(offset):
    def mutate(data):
        data = bytearray(data)
        data[offset % len(data)] ^= 0x01
        return bytes(data)
    return mutate


MUTATIONS = {
    # name: (mutation, the errors it may give)
    "magic": (flip(0), {"notAVaultFile"}),
    "format": (lambda d: d[:8] + b"\x02" + d[9:], {"unsupportedFormatVersion"}),
    "file-id": (flip(12), {"wrongPassphrase", "corruptFile"}),
    "kdf-cost-down": (lambda d: d[:26] + bytes([d[26] - 1]) + d[27:], {"weakKDFParameters"}),
    "kdf-cost-up": (lambda d: d[:26] + bytes([40]) + d[27:], {"kdfParametersTooCostly"}),
    "salt": (flip(40), {"wrongPassphrase", "corruptFile"}),
    "wrapped-key": (flip(90), {"wrongPassphrase", "corruptFile"}),
    "body": (flip(200), {"corruptFile"}),
    "last-byte": (flip(-1), {"corruptFile"}),
    "truncated-header": (lambda d: d[:60], {"truncatedFile"}),
    "truncated-body": (lambda d: d[:-10], {"truncatedFile"}),
    "trailing-byte": (lambda d: d + b"\x00", {"corruptFile", "truncatedFile"}),
    "empty": (lambda d: b"", {"notAVaultFile", "truncatedFile"}),
    "json": (lambda d: b'{"items": []}\n', {"notAVaultFile"}),
    "png": (lambda d: b"\x89PNG\r\n\x1a\n" + bytes(200), {"notAVaultFile"}),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_corrupt_or_foreign_file_is_left_byte_identical(locked_vault, tmp_path, name):
    v = locked_vault
    mutate, allowed = MUTATIONS[name]
    v.file.write_bytes(mutate(v.file.read_bytes()))
    before = snapshot(v.path)
    for args in (["list"], ["unlock"], ["add-password", "--site", "b.example", "--username", "bob"], ["init"]):
        result = v.run(*args, passphrase=PASSPHRASE, input="new-password\n")
        assert result.returncode != 0, f"{args} accepted a {name} file"
        code = error_code(result)
        assert code in allowed | ({"vaultExists"} if args == ["init"] else set()), f"{args}: {result.stderr}"
        assert PASSPHRASE not in result.stderr and "s3cret" not in result.stderr
        assert snapshot(v.path) == before, f"{args} changed the directory"


def test_unlock_session_and_lock(locked_vault):
    v = locked_vault
    v.ok("unlock", "--idle", "600", passphrase=PASSPHRASE)
    session = v.path / "session"
    assert stat.S_IMODE(os.stat(session).st_mode) == 0o600
    assert PASSPHRASE.encode() not in session.read_bytes()
    status = v.status()
    assert status["unlocked"] is True and status["passwords"] == 1 and status["codes"] == 1
    assert "example.com" in v.ok("list")  # no passphrase: the session opens it
    v.ok("lock")
    assert not session.exists()
    result = v.run("list")
    assert result.returncode != 0 and error_code(result) == "passphraseUnavailable"
    # A short idle time ends the session by itself.
    v.ok("unlock", "--idle", "1", passphrase=PASSPHRASE)
    time.sleep(2.5)
    assert v.run("list").returncode != 0
    assert v.status()["unlocked"] is False


# MARK: Passwords


def test_passwords_add_list_show_delete(vault, tmp_path):
    v = vault
    first = v.add_password("https://Example.COM/login", "alice", "pw-from-stdin")
    password_file = tmp_path / "pw"
    password_file.write_text("pw-from-file\nignored second line\n")
    second = v.ok("add-password", "--site", "example.org", "--site", "www.example.org", "--username", "bob",
                  "--password-file", password_file)
    generated = v.ok("add-password", "--site", "example.net", "--generate")
    made = re.search(r"^Password: (\S+)$", generated, re.M).group(1)
    assert len(made) == 20

    items = v.items("--kind", "password")
    assert len(items) == 3
    assert {tuple(i["sites"]) for i in items} == {("example.com",), ("example.org", "www.example.org"), ("example.net",)}
    listing = v.ok("list")
    for secret in ("pw-from-stdin", "pw-from-file", made):
        assert secret not in listing and secret not in json.dumps(items)
    assert "password" not in v.show(first)
    assert v.show(first, reveal=True)["password"] == "pw-from-stdin"
    assert v.show("example.org", reveal=True)["password"] == "pw-from-file"
    assert v.show("example.net", reveal=True)["password"] == made
    assert "Added" in second

    # Delete asks first; without a terminal it needs --yes.
    refused = v.run("delete", first)
    assert refused.returncode == 2 and len(v.items()) == 3
    v.ok("delete", first, "--yes")
    assert first not in v.ok("list")
    missing = v.run("show", first)
    assert missing.returncode == 1 and error_code(missing) == "itemNotFound"
    # A query two items answer is refused rather than guessed.
    v.add_password("example.org", "carol", "another")
    ambiguous = v.run("show", "example.org")
    assert ambiguous.returncode == 1 and error_code(ambiguous) == "ambiguousItem"


def test_editing_a_password(vault, tmp_path):
    v = vault
    item = v.add_password("example.com", "alice", "first-password", "--notes", "old note")
    v.ok("edit", item, "--username", "alice@example.com", "--add-site", "https://login.example.com/x",
         "--remove-site", "example.com", "--password-stdin", input="second-password\n")
    shown = v.show(item, reveal=True)
    assert (shown["username"], shown["sites"], shown["password"], shown["notes"]) == \
        ("alice@example.com", ["login.example.com"], "second-password", "old note")
    password_file = tmp_path / "pw"
    password_file.write_text("third-password\n")
    v.ok("edit", item, "--password-file", password_file, "--notes", "new note")
    assert (v.show(item, reveal=True)["password"], v.show(item)["notes"]) == ("third-password", "new note")
    made = re.search(r"^Password: (\S+)$", v.ok("edit", item, "--generate", "--clear-notes"), re.M).group(1)
    assert v.show(item, reveal=True)["password"] == made and "notes" not in v.show(item)

    code = v.add_code("otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
    v.ok("edit", code, "--add-site", "example.com")
    assert v.show(code)["sites"] == ["example.com"]
    before = v.file.read_bytes()
    for args in ([item], [code, "--username", "x"], [item, "--remove-site", "nowhere.example"],
                 [item, "--remove-site", "login.example.com"],  # a password keeps at least one site
                 [item, "--add-site", "not a site"], [item, "--generate", "--password-stdin"],
                 [item, "--notes", "a", "--clear-notes"], [item, "--username", "bidi\u202ename"]):
        result = v.run("edit", *args, input="pw\n")
        assert result.returncode == 2, (args, result.stderr)
    assert v.file.read_bytes() == before


def test_oversized_or_binary_secret_input_is_refused(vault, tmp_path):
    before = snapshot(vault.path)
    huge = vault.run("add-password", "--site", "example.com", input="x" * 70_000)  # no newline, past 64 KiB
    assert huge.returncode == 2 and "larger than" in huge.stderr
    binary_file = tmp_path / "pw"
    binary_file.write_bytes(b"\xff\xfe not utf-8\n")
    bad = vault.run("add-password", "--site", "example.com", "--password-file", binary_file)
    assert bad.returncode == 2 and "UTF-8" in bad.stderr
    assert snapshot(vault.path) == before


@pytest.mark.parametrize("site", ["not a site", "https://", "exa_mple.com", ""])
def test_bad_sites_are_refused(vault, site):
    before = snapshot(vault.path)
    result = vault.run("add-password", "--site", site, "--username", "a", input="pw\n")
    assert result.returncode == 2
    assert snapshot(vault.path) == before


# MARK: Verification codes


TOTP_CASES = [(alg, digits, period) for alg in ("SHA1", "SHA256", "SHA512") for digits in (6, 7, 8)
              for period in (30, 60)]
TIMES = [0, 59, 1_111_111_109, 1_234_567_890, 2_000_000_000, 20_000_000_000]


def test_codes_agree_with_pyotp(vault):
    v = vault
    secrets = {}
    for alg, digits, period in TOTP_CASES:
        # 20, 35 and 65 bytes: at least the hash's block-worth RFC 6238's seeds use, in whole Base32 groups.
        secret = pyotp.random_base32(length=32 if alg == "SHA1" else 56 if alg == "SHA256" else 104)
        issuer = f"{alg}-{digits}-{period}"
        secrets[issuer] = (secret, alg, digits, period)
        v.add_code(f"otpauth://totp/{issuer}:alice?secret={secret}&issuer={issuer}&algorithm={alg}"
                   f"&digits={digits}&period={period}")
    before = v.file.read_bytes()
    for t in TIMES + [int(time.time())]:
        lines = v.ok("code", "--at", t).splitlines()
        assert len(lines) == len(TOTP_CASES)
        for line in lines:
            code, validity, title = line.split("  ", 2)
            secret, alg, digits, period = secrets[title.split(" — ")[0]]
            expected = pyotp.TOTP(secret, digits=digits, digest=getattr(hashlib, alg.lower()), interval=period).at(t)
            assert code == expected, f"{title} at {t}"
            assert validity == f"{period - t % period}s"
    assert v.file.read_bytes() == before  # TOTP codes change nothing in the vault
    # One generator: the code, then how long it stays valid.
    one = v.ok("code", "SHA256-8-30", "--at", 1_111_111_109).splitlines()
    secret = secrets["SHA256-8-30"][0]
    assert one == [pyotp.TOTP(secret, digits=8, digest=hashlib.sha256).at(1_111_111_109),
                   "valid for 1 more second"]
    # ISO 8601 times too, and a bad one is a usage error.
    iso = v.ok("code", "SHA1-6-30", "--at", "2033-05-18T03:33:20Z").splitlines()[0]
    assert iso == pyotp.TOTP(secrets["SHA1-6-30"][0]).at(2_000_000_000)
    assert v.run("code", "--at", "yesterday").returncode == 2


def test_rfc6238_vector_through_the_keychain(vault):
    # RFC 6238 Appendix B, SHA-1 at T = 59: 94287082.
    vault.add_code("otpauth://totp/RFC:6238?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=RFC&digits=8")
    assert vault.ok("code", "RFC", "--at", 59).splitlines() == ["94287082", "valid for 1 more second"]


def test_hotp_counter_moves_on_and_is_kept(vault):
    secret = pyotp.random_base32()
    item = vault.add_code(f"otpauth://hotp/Bank:alice?secret={secret}&issuer=Bank&counter=5&digits=8&algorithm=SHA256")
    hotp = pyotp.HOTP(secret, digits=8, digest=hashlib.sha256)
    for counter in (5, 6, 7):
        before = vault.file.read_bytes()
        assert vault.ok("code", item).splitlines() == [hotp.at(counter), f"counter {counter}"]
        assert vault.file.read_bytes() != before  # the counter moved on and was saved before the code was shown
    assert vault.show(item)["counter"] == 8


def test_apple_otpauth_link_and_qr_from_sesame_otp_setup(vault, binary, tmp_path):
    image = tmp_path / "setup.png"
    made = subprocess.run([binary, "otp", "new", "--issuer", "example.com", "--account", "alice@example.com",
                           "--qr", image], capture_output=True, text=True, check=True).stdout
    secret = re.search(r"^Secret:\s+(\S+)$", made, re.M).group(1)
    apple = re.search(r"^Apple link:\s+(\S+)$", made, re.M).group(1)
    assert apple.startswith("apple-otpauth://")
    from_link = vault.add_code(apple)
    assert vault.show(from_link)["sites"] == ["example.com"]
    now = int(time.time())
    assert vault.ok("code", from_link, "--at", now).splitlines()[0] == pyotp.TOTP(secret).at(now)
    if shutil.which("zbarimg") is None:
        pytest.skip("zbarimg (Debian zbar-tools) is not installed; the link half passed")
    out = vault.ok("add-code", "--qr", image)
    from_qr = re.search(r"^Added (\w+) ", out).group(1)
    assert vault.ok("code", from_qr, "--at", now).splitlines()[0] == pyotp.TOTP(secret).at(now)
    assert vault.show(from_qr, reveal=True)["uri"] == vault.show(from_link, reveal=True)["uri"]


def test_bad_links_and_images_are_refused_without_echoing_the_secret(vault, tmp_path):
    before = snapshot(vault.path)
    secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PX1"  # not Base32 ('1')
    for link in (f"otpauth://totp/x:a?secret={secret}", "https://example.com/", f"otpauth://totp/x:a?secret={secret[:8]}",
                 "otpauth://totp/x:a?secret=JBSWY3DPEHPK3PXP&digits=12"):
        result = vault.run("add-code", "-", input=link + "\n")
        assert result.returncode == 2, link
        assert secret not in result.stderr and secret[:8] not in result.stderr
    (tmp_path / "not.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    if shutil.which("zbarimg"):
        result = vault.run("add-code", "--qr", tmp_path / "not.png")
        assert result.returncode == 2 and error_code(result) == "qrUnreadable"
    assert vault.run("add-code", "--qr", tmp_path / "missing.png").returncode == 2
    assert snapshot(vault.path) == before
    result = vault.run("code")
    assert result.returncode == 1 and error_code(result) == "itemNotFound"


# MARK: Passkeys


def creation_options(challenge, user_id, *, rp_id=RP_ID, uv="required"):
    return {
        "rp": {"id": rp_id, "name": "Example"},
        "user": {"id": b64url(user_id), "name": "alice@example.com", "displayName": "Alice"},
        "challenge": b64url(challenge),
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8}],
        "authenticatorSelection": {"residentKey": "required", "userVerification": uv},
        "attestation": "none",
    }


def request_options(challenge, allow=()):
    return {"challenge": b64url(challenge), "rpId": RP_ID, "userVerification": "required",
            "allowCredentials": [{"type": "public-key", "id": b64url(c)} for c in allow]}


def make_passkey(v, *extra, origin=ORIGIN):
    challenge, user_id = os.urandom(32), os.urandom(16)
    result = v.run("webauthn", "create", "--origin", origin, "--options", "-", *extra,
                   input=json.dumps(creation_options(challenge, user_id)))
    assert result.returncode == 0, result.stderr
    registration = json.loads(result.stdout)
    verified = webauthn.verify_registration_response(
        credential=registration, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        require_user_verification=True)
    return registration, verified


def sign_in(v, verified, origin=ORIGIN):
    challenge = os.urandom(32)
    result = v.run("webauthn", "get", "--origin", origin, "--options", "-",
                   input=json.dumps(request_options(challenge, [verified.credential_id])))
    assert result.returncode == 0, result.stderr
    return webauthn.verify_authentication_response(
        credential=json.loads(result.stdout), expected_challenge=challenge, expected_rp_id=RP_ID,
        expected_origin=ORIGIN, credential_public_key=verified.credential_public_key, credential_current_sign_count=0,
        require_user_verification=True)


@pytest.mark.parametrize("algorithm", ["es256", "eddsa"])
def test_passkeys_verify_with_py_webauthn_and_can_be_listed_and_removed(vault, algorithm):
    needs_suffix_list()
    registration, verified = make_passkey(vault, "--algorithm", algorithm)
    assert registration["response"]["publicKeyAlgorithm"] == {"es256": -7, "eddsa": -8}[algorithm]
    assert verified.fmt == "none"
    assert verified.user_verified is True
    assert verified.sign_count == 0
    assert verified.credential_backed_up is True
    assert verified.credential_device_type == "multi_device"
    assert str(uuid.UUID(verified.aaguid)) == KEYCHAIN_AAGUID
    authenticated = sign_in(vault, verified)
    assert authenticated.new_sign_count == 0 and authenticated.user_verified is True
    # Discoverable sign-in (no allow list), choosing the passkey by its credential ID.
    challenge = os.urandom(32)
    chosen = vault.run("webauthn", "get", "--origin", ORIGIN, "--options", "-", "--credential",
                       b64url(verified.credential_id), input=json.dumps(request_options(challenge)))
    assert chosen.returncode == 0, chosen.stderr
    assert b64url_decode(json.loads(chosen.stdout)["rawId"]) == verified.credential_id
    bad = vault.run("webauthn", "get", "--origin", ORIGIN, "--options", "-", "--credential", "not*base64",
                    input=json.dumps(request_options(challenge)))
    assert bad.returncode == 2

    passkeys = vault.items("--kind", "passkey")
    assert len(passkeys) == 1
    assert passkeys[0]["rpId"] == RP_ID and passkeys[0]["userName"] == "alice@example.com"
    assert b64url_decode(passkeys[0]["credentialId"]) == verified.credential_id
    assert passkeys[0]["lastUsed"] is not None
    shown = vault.ok("show", passkeys[0]["id"], "--reveal")
    assert "private" not in shown.lower()
    vault.ok("delete", passkeys[0]["id"], "--yes")
    assert vault.items("--kind", "passkey") == []
    challenge = os.urandom(32)
    gone = vault.run("webauthn", "get", "--origin", ORIGIN, "--options", "-",
                     input=json.dumps(request_options(challenge, [verified.credential_id])))
    assert gone.returncode == 1 and error_code(gone) == "noCredential"


def test_webauthn_prf_in_the_options_json_agrees_with_python_fido2(vault, tmp_path):
    """`webauthn create|get` take the prf inputs in the options JSON and print clientExtensionResults.prf in the
    Level 3 JSON form (base64url); the values equal python-fido2's salt derivation over the passkey's secret as the
    CXF export carries it (hmacCredentials.credWithUV)."""
    needs_suffix_list()
    import hashlib
    import hmac
    from fido2.ctap2.extensions import _prf_salt

    salts = {"first": b64url(b"one salt"), "second": b64url(b"another salt")}
    options = creation_options(os.urandom(32), os.urandom(16))
    options["extensions"] = {"prf": {"eval": salts}}
    made = json.loads(vault.ok("webauthn", "create", "--origin", ORIGIN, "--options", "-", input=json.dumps(options)))
    outputs = made["clientExtensionResults"]["prf"]
    assert outputs["enabled"] is True
    request = request_options(os.urandom(32), [b64url_decode(made["id"])])
    request["extensions"] = {"prf": {"evalByCredential": {made["id"]: salts}}}
    got = json.loads(vault.ok("webauthn", "get", "--origin", ORIGIN, "--options", "-", input=json.dumps(request)))
    assert got["clientExtensionResults"]["prf"] == {"results": outputs["results"]}

    vault.ok("export", "--cxf", tmp_path / "out.cxf", passphrase=PASSPHRASE)
    document = json.loads((tmp_path / "out.cxf").read_text())
    [passkey] = [c for a in document["accounts"] for i in a["items"] for c in i["credentials"] if c["type"] == "passkey"]
    secret = b64url_decode(passkey["fido2Extensions"]["hmacCredentials"]["credWithUV"])
    for name in ("first", "second"):
        expected = hmac.new(secret, _prf_salt(b64url_decode(salts[name])), hashlib.sha256).digest()
        assert b64url_decode(outputs["results"][name]) == expected

    # evalByCredential without allowCredentials: refused as a browser does (NotSupportedError).
    bare = request_options(os.urandom(32))
    bare["extensions"] = {"prf": {"evalByCredential": {made["id"]: salts}}}
    refused = vault.run("webauthn", "get", "--origin", ORIGIN, "--options", "-", input=json.dumps(bare))
    assert refused.returncode != 0 and "extensionNotSupported" in refused.stderr


@pytest.mark.parametrize("algorithm", ["es256", "eddsa"])
def test_python_fido2_verifies_keychain_passkeys(vault, algorithm):
    needs_suffix_list()
    from fido2.server import Fido2Server
    from fido2.webauthn import (AttestationConveyancePreference, PublicKeyCredentialRpEntity,
                                PublicKeyCredentialUserEntity, UserVerificationRequirement)

    server = Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="Example"),
                         attestation=AttestationConveyancePreference.NONE, verify_origin=lambda o: o == ORIGIN)
    challenge, user_id = os.urandom(32), os.urandom(16)
    created = vault.run("webauthn", "create", "--origin", ORIGIN, "--options", "-", "--algorithm", algorithm,
                        input=json.dumps(creation_options(challenge, user_id)))
    assert created.returncode == 0, created.stderr
    registration = json.loads(created.stdout)
    user = PublicKeyCredentialUserEntity(id=user_id, name="alice@example.com", display_name="Alice")
    _, state = server.register_begin(user, challenge=challenge, user_verification=UserVerificationRequirement.REQUIRED)
    auth_data = server.register_complete(state, registration)
    assert auth_data.is_user_verified() and auth_data.is_backup_eligible() and auth_data.is_backed_up()
    assert str(auth_data.credential_data.aaguid) == KEYCHAIN_AAGUID
    assert auth_data.counter == 0
    credential = auth_data.credential_data

    # A discoverable sign-in (empty allow list) answers with the user handle.
    challenge = os.urandom(32)
    got = vault.run("webauthn", "get", "--origin", ORIGIN, "--options", "-", input=json.dumps(request_options(challenge)))
    assert got.returncode == 0, got.stderr
    assertion = json.loads(got.stdout)
    assert b64url_decode(assertion["response"]["userHandle"]) == user_id
    _, state = server.authenticate_begin(user_verification=UserVerificationRequirement.REQUIRED, challenge=challenge)
    assert server.authenticate_complete(state, [credential], assertion).credential_id == credential.credential_id


@pytest.mark.parametrize("origin,rp_id,status,code", [
    ("https://login.example.net", RP_ID, 1, "rpIdNotAllowed"),   # another site
    ("https://example.com", "login.example.com", 1, "rpIdNotAllowed"),  # a subdomain of the origin's host
    ("https://example.com", "com", 1, "rpIdNotAllowed"),  # a public suffix
    ("https://a.github.io", "github.io", 1, "rpIdNotAllowed"),  # a private-section public suffix
    ("http://login.example.com", RP_ID, 2, "invalidOrigin"),  # http outside localhost
    ("https://login.example.com/path", RP_ID, 2, "invalidOrigin"),
])
def test_rp_ids_are_checked_against_the_origin_and_public_suffix_list(vault, origin, rp_id, status, code):
    needs_suffix_list()
    result = vault.run("webauthn", "create", "--origin", origin, "--options", "-",
                       input=json.dumps(creation_options(os.urandom(32), os.urandom(16), rp_id=rp_id)))
    assert result.returncode == status and error_code(result) == code, result.stderr
    assert vault.items("--kind", "passkey") == []


def test_user_verification_needs_a_recent_unlock(vault):
    needs_suffix_list()
    vault.ok("unlock", "--verify-window", "1", passphrase=PASSPHRASE)
    time.sleep(2.5)
    result = vault.run("webauthn", "create", "--origin", ORIGIN, "--options", "-",
                       input=json.dumps(creation_options(os.urandom(32), os.urandom(16))))
    assert result.returncode == 1 and error_code(result) == "userVerificationRequired"
    # Giving the passphrase to the command itself verifies the user.
    make_passkey_with_passphrase = vault.run(
        "webauthn", "create", "--origin", ORIGIN, "--options", "-", passphrase=PASSPHRASE,
        input=json.dumps(creation_options(os.urandom(32), os.urandom(16))))
    assert make_passkey_with_passphrase.returncode == 0, make_passkey_with_passphrase.stderr


# MARK: CXF


def test_cxf_export_then_import_into_a_fresh_vault_round_trips_every_item(vault, binary, tmp_path):
    needs_suffix_list()
    v = vault
    v.add_password("example.com", "alice", "pw-one", "--notes", "the work account")
    v.add_password("example.org", "bob", "pw-two")
    totp = pyotp.random_base32()
    v.add_code(f"otpauth://totp/example.com:alice?secret={totp}&issuer=example.com&algorithm=SHA256&digits=8")
    _, verified = make_passkey(v)
    hotp = v.add_code(f"otpauth://hotp/Bank:alice?secret={pyotp.random_base32()}&issuer=Bank&counter=3")

    out = tmp_path / "export.cxf"
    exported = v.ok("export", "--cxf", out)
    assert "1 passkey, 2 password, 1 code" in exported
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    document = json.loads(out.read_text())
    assert document["version"]["major"] == 1
    # An existing file is not replaced without --force.
    before = out.read_bytes()
    refused = v.run("export", "--cxf", out)
    assert refused.returncode == 2 and out.read_bytes() == before
    v.ok("export", "--cxf", out, "--force")

    fresh = Vault(binary, tmp_path / "fresh")
    fresh.init()
    imported = fresh.ok("import", "--cxf", out)
    assert "Imported 1 passkey, 2 password, 1 code; 0 already here." in imported

    def comparable(vault_):
        result = {}
        for item in vault_.items():
            if item["id"] == hotp:
                continue
            shown = vault_.show(item["id"], reveal=True)
            for volatile in ("id", "created", "modified", "lastUsed"):
                shown.pop(volatile, None)
            result[(shown["kind"], shown["title"])] = shown
        return result

    assert comparable(fresh) == comparable(v)
    assert fresh.ok("code", "example.com", "--at", 1_000_000_000).splitlines()[0] == \
        pyotp.TOTP(totp, digits=8, digest=hashlib.sha256).at(1_000_000_000)
    # The imported passkey signs in for the same relying party with the same public key.
    sign_in(fresh, verified)
    # A second import finds everything already there.
    assert "Imported 0 passkey, 0 password, 0 code; 4 already here." in fresh.ok("import", "--cxf", out)


def test_a_large_blob_travels_in_cxf_and_zlib_compressed_blobs_import(vault, binary, tmp_path):
    """largeBlob in CXF (`fido2Extensions.largeBlob`, DEFLATE): Python's zlib inflates what the export wrote (stored
    blocks) to the blob the site stored, and a blob zlib compressed (as another exporter would) imports and reads
    back through `webauthn get` unchanged."""
    import zlib
    needs_suffix_list()
    made = json.loads(vault.ok("webauthn", "create", "--origin", ORIGIN, "--options", "-",
                               input=json.dumps(creation_options(os.urandom(32), os.urandom(16)))))
    blob = b"a site's note, encrypted " * 40  # 1,000 bytes that compress well
    write = request_options(os.urandom(32), [b64url_decode(made["id"])])
    write["extensions"] = {"largeBlob": {"write": b64url(blob)}}
    written = json.loads(vault.ok("webauthn", "get", "--origin", ORIGIN, "--options", "-", input=json.dumps(write)))
    assert written["clientExtensionResults"]["largeBlob"] == {"written": True}

    vault.ok("export", "--cxf", tmp_path / "out.cxf", passphrase=PASSPHRASE)
    document = json.loads((tmp_path / "out.cxf").read_text())
    [passkey] = [c for a in document["accounts"] for i in a["items"] for c in i["credentials"] if c["type"] == "passkey"]
    exported = passkey["fido2Extensions"]["largeBlob"]
    assert exported["uncompressedSize"] == len(blob)
    assert zlib.decompress(b64url_decode(exported["data"]), -15) == blob

    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    compressed = packer.compress(blob) + packer.flush()
    assert len(compressed) < len(blob) // 4
    exported["data"] = b64url(compressed)
    (tmp_path / "zlib.cxf").write_text(json.dumps(document))
    fresh = Vault(binary, tmp_path / "fresh")
    fresh.init()
    assert "Imported 1 passkey" in fresh.ok("import", "--cxf", tmp_path / "zlib.cxf")
    read = request_options(os.urandom(32), [b64url_decode(made["id"])])
    read["extensions"] = {"largeBlob": {"read": True}}
    got = json.loads(fresh.ok("webauthn", "get", "--origin", ORIGIN, "--options", "-", input=json.dumps(read)))
    assert b64url_decode(got["clientExtensionResults"]["largeBlob"]["blob"]) == blob

    # Data that is not DEFLATE, or not its stated size: that passkey is not imported (without its blob either),
    # and the report says why.
    for data, size in ((b"\x07", len(blob)), (compressed, len(blob) - 1)):
        exported["data"], exported["uncompressedSize"] = b64url(data), size
        (tmp_path / "bad.cxf").write_text(json.dumps(document))
        other = Vault(binary, tmp_path / f"other-{size}")
        other.init()
        out = other.run("import", "--cxf", tmp_path / "bad.cxf")
        assert "Imported 0 passkey" in out.stdout and "large blob" in out.stderr, (out.stdout, out.stderr)
        assert other.items() == []


BITWARDEN_EXPORT = ROOT / "Tests" / "KeychainTests" / "Vectors" / "bitwarden" / "export.json"


def test_a_bitwarden_export_imports_and_a_bad_one_changes_nothing(vault, tmp_path):
    """`import --bitwarden`: an unencrypted Bitwarden JSON export (written for the tests, in Bitwarden's shape) adds
    its logins, codes and passkeys, counts what it cannot keep, and reports the logins it could not read; an
    encrypted or malformed export, or one with a passkey whose key is not P-256 or does not read, is refused before
    anything is written (the vault directory byte-identical)."""
    needs_suffix_list()
    empty = snapshot(vault.path)
    for name, content, code in [
        ("p384", bitwarden_export_with_passkey(keyCurve="P-384"), "unsupportedPasskeyKey"),
        ("unreadable key", bitwarden_export_with_passkey(keyValue="AAECAwQFBgcICQ"), "malformedPasskeyKey"),
    ]:
        (tmp_path / f"{name}.json").write_bytes(content)
        result = vault.run("import", "--bitwarden", tmp_path / f"{name}.json")
        assert result.returncode == 2 and error_code(result) == code, (name, result.stderr)
        assert "fido2Credentials[0]" in result.stderr and snapshot(vault.path) == empty, name
    out = vault.run("import", "--bitwarden", BITWARDEN_EXPORT)
    assert out.returncode == 0, out.stderr
    assert "Imported 2 passkey, 2 password, 2 code; 0 already here." in out.stdout
    assert "passkey (Bitwarden)" not in out.stdout and "Skipped 1 card (Bitwarden)" in out.stdout
    assert out.stderr.count("not imported: ") == 2
    assert "tulip-quarry-19" not in out.stdout + out.stderr  # no secret in the report
    [shop] = [i for i in vault.items() if i["kind"] == "password" and "shop.example.com" in json.dumps(i)]
    assert vault.show(shop["id"], reveal=True)["password"] == "tulip-quarry-19"
    assert vault.ok("code", "mail.example.org", "--at", 1_000_000_000).splitlines()[0] == \
        pyotp.TOTP("JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP").at(1_000_000_000)
    assert "Imported 0 passkey, 0 password, 0 code; 6 already here." in vault.ok("import", "--bitwarden",
                                                                               BITWARDEN_EXPORT)

    before = snapshot(vault.path)
    for name, content, code in [
        ("encrypted", b'{"encrypted": true, "passwordProtected": true, "data": "AAAA"}', "encryptedExport"),
        ("text", b"Group,Title,Username\n", "invalidExport"),
        ("shape", b'{"items": [{"type": 1, "name": "a.example", "login": {"password": "p"}}, {"type": "x"}]}',
         "invalidExport"),
    ]:
        path = tmp_path / f"{name}.json"
        path.write_bytes(content)
        result = vault.run("import", "--bitwarden", path)
        assert result.returncode == 2 and error_code(result) == code, (name, result.stderr)
        assert snapshot(vault.path) == before, name
    both = vault.run("import", "--bitwarden", BITWARDEN_EXPORT, "--cxf", BITWARDEN_EXPORT)
    assert both.returncode == 2 and snapshot(vault.path) == before


def bitwarden_export_with_passkey(**changes) -> bytes:
    """The test export with the first passkey's members changed (its logins before it would import)."""
    export = json.loads(BITWARDEN_EXPORT.read_text())
    [holder] = [i for i in export["items"] if (i.get("login") or {}).get("fido2Credentials")]
    holder["login"]["fido2Credentials"][0].update(changes)
    return json.dumps(export).encode()


def test_passkeys_from_a_bitwarden_export_sign_in_on_a_site(vault, second_site):
    """The export's two passkeys, one whose ID Bitwarden writes as a GUID and one as "b64." and base64url, sign in
    on the Flask site (py_webauthn verifies), which knows them with the public keys Python derives from the
    export's PKCS #8 keys: the IDs came across byte-exact and the keys whole."""
    import urllib.request
    from browser_keychain_fixtures import bitwarden_passkeys
    needs_suffix_list()
    vault.ok("import", "--bitwarden", BITWARDEN_EXPORT)
    exported = bitwarden_passkeys(BITWARDEN_EXPORT)
    assert len(exported) == 2
    listed = {b64url_decode(p["credentialId"]) for p in vault.items("--kind", "passkey")}
    assert listed == {p["credential_id"] for p in exported}

    def post(path, body=None):
        request = urllib.request.Request(second_site.origin.replace("second.localhost", "127.0.0.1") + path,
                                         data=body or b"{}", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    for passkey in exported:
        assert passkey["rp_id"] == second_site.rp_id
        second_site.knows(passkey["credential_id"], passkey["username"], passkey["public_key"])
        options = post("/signin/options")
        result = vault.run("webauthn", "get", "--origin", second_site.origin, "--options", "-", "--credential",
                           b64url(passkey["credential_id"]), input=json.dumps(options))
        assert result.returncode == 0, result.stderr
        assert post("/signin/verify", result.stdout.encode()) == {"username": passkey["username"]}
    assert [v[:2] for v in second_site.verified] == [("authentication", "lin"), ("authentication", "max")]


KEEPASSXC_EXPORT = ROOT / "Tests" / "KeychainTests" / "Vectors" / "keepassxc" / "export.csv"


def test_a_keepassxc_export_imports_and_a_bad_one_changes_nothing(vault, tmp_path):
    """`import --keepassxc`: a KeePassXC CSV export (written for the tests, in KeePassXC's shape, read back here with
    Python's csv module as a second reader) adds its rows' passwords and codes and reports the two it cannot read;
    a file that is not such CSV is refused before anything is written (the vault directory byte-identical)."""
    import csv
    needs_suffix_list()
    with open(KEEPASSXC_EXPORT, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["Title"] for r in rows] == ["Example shop", "mail.example.org", "No site here", "Bad code"]
    out = vault.run("import", "--keepassxc", KEEPASSXC_EXPORT)
    assert out.returncode == 0, out.stderr
    assert "Imported 0 passkey, 2 password, 2 code; 0 already here." in out.stdout
    assert out.stderr.count("not imported: ") == 2
    [mail] = [i for i in vault.items() if i["kind"] == "password" and "mail.example.org" in json.dumps(i)]
    shown = vault.show(mail["id"], reveal=True)
    assert shown["password"] == rows[1]["Password"] and shown["notes"] == rows[1]["Notes"]
    assert vault.ok("code", "shop.example.com", "--at", 1_000_000_000).splitlines()[0] == \
        pyotp.parse_uri(rows[0]["TOTP"]).at(1_000_000_000)

    before = snapshot(vault.path)
    for name, content in [("bitwarden", BITWARDEN_EXPORT.read_bytes()),
                          ("ragged", b'"Title","Username","Password","URL"\r\n"a","b","c"\r\n'),
                          ("unterminated", b'"Title","Username","Password","URL"\r\n"a,"b","c","d"\r\n')]:
        path = tmp_path / f"{name}.csv"
        path.write_bytes(content)
        result = vault.run("import", "--keepassxc", path)
        assert result.returncode == 2 and error_code(result) == "invalidExport", (name, result.stderr)
        assert snapshot(vault.path) == before, name


def test_a_cxf_document_shaped_as_the_specification_imports(vault):
    # The specification-shaped example kept with the Swift tests (see its README there).
    path = __import__("pathlib").Path(__file__).resolve().parents[1] / "KeychainTests" / "Vectors" / "cxf" / \
        "spec-shaped-header.json"
    out = vault.ok("import", "--cxf", path)
    assert re.search(r"Imported [1-9]", out), out


@pytest.mark.parametrize("content", [b"", b"not json", b"{}", b'{"version": {"major": 9, "minor": 0}}',
                                     b"[" * 10000], ids=["empty", "text", "empty-object", "version-9", "deep"])
def test_a_bad_cxf_file_changes_nothing(vault, tmp_path, content):
    path = tmp_path / "bad.cxf"
    path.write_bytes(content)
    before = snapshot(vault.path)
    result = vault.run("import", "--cxf", path)
    assert result.returncode == 2, result.stderr
    assert error_code(result) in {"invalidCXF", "unsupportedCXFVersion"}
    assert snapshot(vault.path) == before


# MARK: Devices, sync, recovery and sharing through a sync folder


DEBIAN_EFF_LIST = pathlib.Path("/usr/lib/python3/dist-packages/diceware/wordlists/wordlist_en_eff.txt")


def test_generated_word_passwords_come_from_the_eff_long_list(binary, tmp_path):
    """`--generate --words N`: N words from the EFF long word list (Electronic Frontier Foundation, 2016, CC BY 3.0),
    whose copy in Sources/Keychain/WordLists is Debian's `diceware` package's wordlist_en_eff.txt without its dice
    numbers (scripts/test installs the package), and the strength stated as N × log2(7776) bits."""
    if not DEBIAN_EFF_LIST.exists():
        pytest.skip("Debian's diceware package is not installed (scripts/test installs it): no list to compare with")
    debian = [line.split("\t")[1] for line in DEBIAN_EFF_LIST.read_text().splitlines()]
    ours = (ROOT / "Sources" / "Keychain" / "WordLists" / "eff_large_wordlist.txt").read_text().splitlines()
    assert ours == debian and len(ours) == 7776
    words = set(debian)
    v = Vault(binary, tmp_path / "v")
    v.init()
    out = v.ok("add-password", "--site", "example.com", "--username", "ann", "--generate", "--words", "5")
    password = re.search(r"^Password: (\S+)$", out, re.M).group(1)
    assert re.search(r"^Strength: about 64 bits of entropy \(5 words from the EFF long word list \(CC BY 3\.0\), "
                     r"7,776 words\)\.$", out, re.M), out

    def splits(parts, count):
        """Whether the hyphen-separated parts are `count` list words (a few words hold a hyphen: "t-shirt")."""
        if not parts or count == 0:
            return not parts and count == 0
        return any("-".join(parts[:i]) in words and splits(parts[i:], count - 1) for i in range(1, len(parts) + 1))
    assert splits(password.split("-"), 5), password
    assert not splits("abacus-abdomen-notaword".split("-"), 3)
    assert v.show("example.com", reveal=True)["password"] == password
    out = v.ok("edit", "example.com", "--generate")
    assert re.search(r"^Strength: about 120 bits of entropy \(20 characters from 65\)\.$", out, re.M), out
    for bad in (["--words", "2"], ["--words", "21"]):
        result = v.run("edit", "example.com", "--generate", *bad)
        assert result.returncode == 2 and error_code(result) == "invalidGeneratorSettings", result.stderr
    assert v.run("edit", "example.com", "--words", "5").returncode == 2  # --words without --generate


def test_a_refused_join_ends_on_the_joining_device(binary, tmp_path):
    """`refuse` lists the devices waiting by the start of the code each shows, and refuses one: its next `join`
    ends with joinRefused, its code no longer approves anything, and A's vault file does not change."""
    needs_suffix_list()
    sync = tmp_path / "sync"
    a = Vault(binary, tmp_path / "a", sync=sync)
    a.init(name="A")
    a.ok("sync")
    assert a.ok("refuse").strip() == "No device is waiting to join."
    b = Vault(binary, tmp_path / "b", sync=sync)
    code = re.search(r"^Pairing code: (\S+)$", b.ok("join", "--device-name", "B", passphrase=PASSPHRASE), re.M).group(1)
    listed = a.ok("refuse")
    assert listed.startswith(code[:14] + "  key fingerprint "), listed
    wrong = a.run("refuse", "00000-00000-00")
    assert wrong.returncode == 1 and error_code(wrong) == "pairingCodeMismatch", wrong.stderr
    before = (tmp_path / "a" / "vault").read_bytes()
    assert a.ok("refuse", code[:14]).strip() == f"Refused the device showing {code[:14]}…; its join has ended."
    assert (tmp_path / "a" / "vault").read_bytes() == before
    refused = b.run("join", passphrase=PASSPHRASE)
    assert refused.returncode == 1 and error_code(refused) == "joinRefused", refused.stderr
    late = a.run("approve", code, "--name", "B")
    assert late.returncode == 1 and error_code(late) == "pairingCodeMismatch", late.stderr


def test_two_devices_join_sync_merge_and_recover(binary, tmp_path):
    needs_suffix_list()
    sync = tmp_path / "sync"
    a = Vault(binary, tmp_path / "a", sync=sync)
    a.init(name="A")
    first = a.add_password("example.com", "alice", "shared-secret-pw")
    solo = Vault(binary, tmp_path / "solo")  # no sync folder: never synced
    solo.init(name="solo")
    assert solo.status()["lastSynced"] is None and "lastSynced: never" in solo.ok("status")
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    a.ok("sync")
    # The last successful sync, recorded in the vault: `status` shows it (ISO 8601, UTC).
    synced = datetime.datetime.fromisoformat(a.status()["lastSynced"].replace("Z", "+00:00"))
    assert before <= synced <= datetime.datetime.now(datetime.timezone.utc), synced

    # B asks to join and shows a code; until A approves, B cannot finish.
    b = Vault(binary, tmp_path / "b", sync=sync)
    joining = b.ok("join", "--device-name", "B", "--qr", tmp_path / "join.png", passphrase=PASSPHRASE)
    code = re.search(r"^Pairing code: (\S+)$", joining, re.M).group(1)
    pending = b.run("join", passphrase=PASSPHRASE)
    assert pending.returncode == 1 and error_code(pending) == "joinPending"
    wrong = a.run("approve", "00000-00000-00000-00000")
    assert wrong.returncode == 1, wrong.stderr
    approval = code
    if shutil.which("zbarimg"):
        approval = subprocess.run(["zbarimg", "--raw", "-q", tmp_path / "join.png"], capture_output=True, text=True,
                                  check=True).stdout.strip()
    a.ok("approve", approval, "--name", "B")
    assert "Joined: 1 items" in b.ok("join", passphrase=PASSPHRASE)
    b.ok("unlock", passphrase=PASSPHRASE)
    assert b.show("example.com", reveal=True)["password"] == "shared-secret-pw"
    assert sorted(line.split()[-1] for line in a.ok("devices").splitlines() if "this device" not in line) == ["B"]

    # A passkey made on A signs in on B.
    _, verified = make_passkey(a)
    a.ok("sync")
    b.ok("sync")
    sign_in(b, verified)

    # Both add while the other is offline, and A deletes: after syncing both ways each has both additions.
    a.add_password("a-only.example", "x", "pw-a")
    b.add_password("b-only.example", "y", "pw-b")
    a.ok("delete", first, "--yes")
    a.ok("sync")
    b.ok("sync")
    a.ok("sync")
    titles = lambda v: sorted(i["title"] for i in v.items("--kind", "password"))
    assert titles(a) == titles(b) == ["a-only.example — x", "b-only.example — y"]

    # The sync folder holds ciphertext only.
    for path in sync.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for plain in (b"pw-a", b"pw-b", b"shared-secret-pw", b"a-only.example", b"alice@example.com"):
                assert plain not in data, f"{plain!r} in {path.name}"

    # Every device lost: the recovery key brings everything back; a wrong one changes nothing anywhere.
    other = Vault(binary, tmp_path / "other")
    other.init(unlock=False)
    before = snapshot(sync)
    c = Vault(binary, tmp_path / "c", sync=sync)
    wrong_key = c.run("recover", "--recovery-key-file", "-", passphrase=PASSPHRASE, input=other.recovery_key + "\n")
    assert wrong_key.returncode == 1 and error_code(wrong_key) == "wrongRecoveryKey", wrong_key.stderr
    assert snapshot(sync) == before
    assert snapshot(c.path) in (None, {})
    shutil.rmtree(a.path)
    shutil.rmtree(b.path)
    key_file = tmp_path / "recovery"
    key_file.write_text(a.recovery_key.lower().replace("-", " ") + "\n")
    recovered = c.ok("recover", "--recovery-key-file", key_file, "--device-name", "C", passphrase=PASSPHRASE)
    assert "Recovered: 3 items" in recovered
    c.ok("unlock", passphrase=PASSPHRASE)
    assert titles(c) == ["a-only.example — x", "b-only.example — y"]
    sign_in(c, verified)


def two_devices(binary, tmp_path):
    sync = tmp_path / "sync"
    a = Vault(binary, tmp_path / "a", sync=sync)
    a.init(name="A")
    a.ok("sync")
    b = Vault(binary, tmp_path / "b", sync=sync)
    code = re.search(r"^Pairing code: (\S+)$", b.ok("join", "--device-name", "B", passphrase=PASSPHRASE), re.M).group(1)
    a.ok("approve", code, "--name", "B")
    b.ok("join", passphrase=PASSPHRASE)
    b.ok("unlock", passphrase=PASSPHRASE)
    return a, b


def test_concurrent_edits_on_two_devices_merge_as_documented(binary, tmp_path):
    a, b = two_devices(binary, tmp_path)
    item = a.add_password("example.com", "alice", "original")
    a.ok("sync")
    b.ok("sync")

    # Different fields on each device while the other is offline: both changes survive, on both devices.
    a.ok("edit", item, "--username", "alice@example.com", "--add-site", "a.example")
    b.ok("edit", item, "--password-stdin", "--add-site", "b.example", input="changed-on-b\n")
    a.ok("sync")
    b.ok("sync")
    a.ok("sync")
    for v in (a, b):
        shown = v.show(item, reveal=True)
        assert (shown["username"], shown["password"]) == ("alice@example.com", "changed-on-b")
        assert sorted(shown["sites"]) == ["a.example", "b.example", "example.com"]

    # The same field changed differently: the later change wins, the other is kept as a conflict copy.
    a.ok("edit", item, "--password-stdin", input="from-a\n")
    time.sleep(0.01)
    b.ok("edit", item, "--password-stdin", input="from-b\n")
    a.ok("sync")
    assert "1 conflict copy kept" in b.ok("sync")
    a.ok("sync")
    for v in (a, b):
        passwords = v.items("--kind", "password")
        assert len(passwords) == 2
        assert v.show(item, reveal=True)["password"] == "from-b"
        copy = next(p for p in passwords if p["id"] != item)
        assert v.show(copy["id"], reveal=True)["password"] == "from-a"
        assert "Conflict copy" in copy["notes"]

    # An edit on one device beats a deletion on the other.
    a.ok("delete", item, "--yes")
    b.ok("edit", item, "--notes", "still needed")
    a.ok("sync")
    b.ok("sync")
    a.ok("sync")
    for v in (a, b):
        assert v.show(item)["notes"] == "still needed"


def test_removing_a_device_rotates_the_key_and_shuts_it_out(binary, tmp_path):
    a, b = two_devices(binary, tmp_path)
    epoch = a.status()["keyEpoch"]
    device_b = next(line.split()[0] for line in a.ok("devices").splitlines() if line.endswith(" B"))
    assert "rotated" in a.ok("devices", "--remove", device_b)
    assert a.status()["keyEpoch"] == epoch + 1
    a.add_password("after.example", "z", "written-after-removal")
    a.ok("sync")
    before = b.file.read_bytes()
    result = b.run("sync")
    assert result.returncode == 1 and error_code(result) == "deviceRemoved", result.stderr
    assert b.file.read_bytes() == before


def test_sharing_a_password_with_another_keychain(binary, tmp_path):
    sync = tmp_path / "sync"
    alice = Vault(binary, tmp_path / "alice", sync=sync)
    alice.init(name="alice")
    item = alice.add_password("example.com", "family", "the-family-password")
    # Another person's keychain: its own vault, which meets Alice's only through the share mailbox.
    bob = Vault(binary, tmp_path / "bob")
    bob.init(name="bob")
    bob.sync = sync
    bob_status, alice_status = bob.status(), alice.status()

    wrong = alice.run("share", item, "--to", bob_status["sharingKey"], "--fingerprint", alice_status["sharingFingerprint"])
    assert wrong.returncode == 1 and error_code(wrong) == "fingerprintMismatch"
    alice.ok("share", item, "--to", bob_status["sharingKey"], "--fingerprint", bob_status["sharingFingerprint"])
    assert "example.com" in alice.ok("share", "--list")

    offers = bob.ok("accept").splitlines()
    assert len(offers) == 1 and offers[0].endswith("from " + alice_status["sharingFingerprint"])
    offer = offers[0].split()[0]
    before = snapshot(bob.path)
    spoofed = bob.run("accept", offer, "--from", bob_status["sharingFingerprint"])
    assert spoofed.returncode == 1 and error_code(spoofed) == "fingerprintMismatch"
    assert snapshot(bob.path) == before
    bob.ok("accept", offer, "--from", alice_status["sharingFingerprint"])
    assert bob.show("example.com", reveal=True)["password"] == "the-family-password"
    for path in sync.rglob("*"):
        if path.is_file():
            assert b"the-family-password" not in path.read_bytes()
