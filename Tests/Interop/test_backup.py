"""`sesame backup` and `sesame restore` (docs/backup.md): a backup taken while clients sign up restores into a fresh
directory where every account finished before the backup began signs in with its passkey, its password and its TOTP
code; a restore refuses (and changes nothing) for a non-empty database, a foreign, truncated or newer-schema file, or
missing sealing keys; PostgreSQL gets pg_dump / pg_restore instructions, and following them under sign-up load
loses no acknowledged account.

The load is scripts/faults' passkey client (ES256 keys made here, `none` attestation), reused as a module."""

import os
import re
import shutil
import sqlite3
import stat
import subprocess
import tempfile
import threading
import time

import pyotp
import pytest

from conftest import ROOT, load_faults


faults = load_faults()
PASSWORD = faults.PASSWORD


def sesame(sesame_bin, *args, timeout=120):
    import subprocess

    return subprocess.run([sesame_bin, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def key_file(sesame_bin, tmp_path):
    path = tmp_path / "sealing-keys"
    result = sesame(sesame_bin, "seal-keys", "generate")
    assert result.returncode == 0, result.stderr
    path.write_text(result.stdout)
    path.chmod(0o600)
    return path


def set_up_factors(port, account):
    """Password and a confirmed authenticator app for a signed-up account; True when all were acknowledged."""
    token = faults.sign_in(port, account)
    if not token:
        return False
    bearer = {"Authorization": f"Bearer {token}"}
    if faults.call(port, "PUT", "/api/account/password", {"newPassword": PASSWORD}, bearer).status != 200:
        return False
    answer = faults.call(port, "POST", "/api/account/totp", {}, bearer)
    if answer.status not in (200, 201):
        return False
    account.totp = pyotp.TOTP(answer.body["secret"])
    confirmed_at = time.time()
    if faults.call(port, "POST", "/api/account/totp/confirm", {"code": account.totp.at(confirmed_at)},
                   bearer).status != 200:
        return False
    account.totp_step = int(confirmed_at // 30)
    return True


def password_and_totp(port, account):
    first = faults.call(port, "POST", "/api/sessions/password", {"username": account.username, "password": PASSWORD})
    if first.status != 200 or "pendingToken" not in first.body:
        return f"password step answered {first.status} {first.body}"
    # The replay rule refuses the confirmation's own step again: use a later one (the verifier allows one step).
    at = max(time.time(), (account.totp_step + 1) * 30)
    second = faults.call(port, "POST", "/api/sessions/second-factor",
                         {"factor": "totp", "code": account.totp.at(at), "pendingToken": first.body["pendingToken"]})
    return None if second.status == 200 else f"TOTP step answered {second.status} {second.body}"


class SignUpLoad:
    """Threads that sign up with a passkey and then set a password and TOTP, recording when each account was
    complete (every step acknowledged)."""

    def __init__(self, port, threads=3):
        self.port = port
        self.stopping = threading.Event()
        self.complete = []  # (monotonic time when acknowledged, account)
        self.started_sign_ups = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.work, args=(i,), daemon=True) for i in range(threads)]

    def work(self, index):
        n = 0
        while not self.stopping.is_set():
            n += 1
            account = faults.Account(f"b{index}-{n}")
            with self.lock:
                self.started_sign_ups += 1
            if faults.sign_up(self.port, account) and set_up_factors(self.port, account):
                with self.lock:
                    self.complete.append((time.monotonic(), account))

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)


def test_backup_under_sign_up_load_restores_every_acknowledged_account(sesame_bin, tmp_path, key_file):
    live_dir = tmp_path / "live"
    live_dir.mkdir()
    database = live_dir / "sesame.sqlite"
    keys = ("--sealing-key-file", str(key_file))
    server = faults.Server(sesame_bin, str(database), str(live_dir), extra=keys)
    server.start()
    load = SignUpLoad(server.port)
    try:
        load.start()
        deadline = time.monotonic() + 60
        while len(load.complete) < 20 and time.monotonic() < deadline:
            time.sleep(0.1)
        began = time.monotonic()
        backup = tmp_path / "backups" / "sesame-backup.sqlite"
        backup.parent.mkdir()
        result = sesame(sesame_bin, "backup", "--to", backup, "--database", database, *keys)
        ended = time.monotonic()
        time.sleep(1)  # sign-ups go on after the backup; they are not expected in it
    finally:
        load.stop()
        server.stop()
    assert result.returncode == 0, result.stderr
    with load.lock:
        before = [account for done, account in load.complete if done < began]
        after = [account for done, account in load.complete if done > ended]
    assert len(before) >= 20 and after, (len(before), len(after))

    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    status = sesame(sesame_bin, "seal-keys", "status", "--database", database, *keys).stdout
    named = re.search(r"sealing key file with key\(s\) ([0-9a-f]{16}):", result.stdout)
    assert "schema version" in result.stdout and named, result.stdout
    assert f"key file: {named.group(1)}" in status, status
    with sqlite3.connect(f"file:{backup}?mode=ro", uri=True) as db:
        recorded = db.execute("SELECT schema_version, sealing_key_ids FROM sesame_backup").fetchone()
        latest = db.execute("SELECT max(version) FROM sesame_migrations").fetchone()[0]
    assert recorded == (latest, named.group(1))

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    restored = fresh / "sesame.sqlite"
    result = sesame(sesame_bin, "restore", "--from", backup, "--database", restored, *keys)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(restored.stat().st_mode) == 0o600
    with sqlite3.connect(f"file:{restored}?mode=ro", uri=True) as db:
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sesame_backup'").fetchone()[0] == 0
        # Nothing half there: every account in the copy has its passkey (sign-up writes both in one transaction).
        assert db.execute("SELECT count(*) FROM users u WHERE NOT EXISTS "
                          "(SELECT 1 FROM credentials c WHERE c.user_id = u.id)").fetchone()[0] == 0
        names = {row[0] for row in db.execute("SELECT username FROM users")}
    assert {account.username for account in before} <= names
    assert f"restored {len(names)} account(s)" in result.stdout

    server = faults.Server(sesame_bin, str(restored), str(fresh), extra=keys)
    server.start()
    try:
        problems = []
        for account in before:
            if not faults.sign_in(server.port, account):
                problems.append(f"{account.username}: passkey sign-in failed")
            problem = password_and_totp(server.port, account)
            if problem:
                problems.append(f"{account.username}: {problem}")
    finally:
        server.stop()
    assert not problems, problems[:5]


@pytest.fixture
def backup_file(sesame_bin, tmp_path, key_file):
    """A backup of a database with one account that has a TOTP secret sealed under the key file."""
    live = tmp_path / "live"
    live.mkdir()
    database = live / "sesame.sqlite"
    keys = ("--sealing-key-file", str(key_file))
    server = faults.Server(sesame_bin, str(database), str(live), extra=keys)
    server.start()
    try:
        account = faults.Account("restore-me")
        assert faults.sign_up(server.port, account) and set_up_factors(server.port, account)
    finally:
        server.stop()
    path = tmp_path / "one.sqlite"
    result = sesame(sesame_bin, "backup", "--to", path, "--database", database, *keys)
    assert result.returncode == 0, result.stderr
    return path


def refused(sesame_bin, tmp_path, source, *extra, code):
    target_dir = tmp_path / "target"
    target_dir.mkdir(exist_ok=True)
    target = target_dir / "sesame.sqlite"
    before = sorted(os.listdir(target_dir))
    original = source.read_bytes() if source.exists() else None
    result = sesame(sesame_bin, "restore", "--from", source, "--database", target, *extra)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"[{code}]" in result.stderr, result.stderr
    assert sorted(os.listdir(target_dir)) == before, "a refused restore leaves the target directory as it was"
    if original is not None:
        assert source.read_bytes() == original, "restore never modifies its input"
    return result.stderr


def test_restore_refuses_a_truncated_file(sesame_bin, tmp_path, backup_file, key_file):
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(backup_file.read_bytes()[: backup_file.stat().st_size // 2])
    message = refused(sesame_bin, tmp_path, cut, "--sealing-key-file", key_file, code="truncated")
    assert "cut off" in message
    tiny = tmp_path / "tiny.sqlite"
    tiny.write_bytes(backup_file.read_bytes()[:40])
    refused(sesame_bin, tmp_path, tiny, "--sealing-key-file", key_file, code="truncated")


def test_restore_refuses_foreign_files(sesame_bin, tmp_path, key_file):
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n" * 20)
    assert "not a SQLite file" in refused(sesame_bin, tmp_path, text, code="notABackup")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
        db.execute("INSERT INTO t VALUES (1)")
    assert "not a Sesame backup" in refused(sesame_bin, tmp_path, other, code="notABackup")
    refused(sesame_bin, tmp_path, tmp_path / "absent.sqlite", code="unreadable")


def test_restore_refuses_a_newer_schema(sesame_bin, tmp_path, backup_file, key_file):
    newer = tmp_path / "newer.sqlite"
    shutil.copy(backup_file, newer)
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE sesame_backup SET schema_version = schema_version + 1")
        db.execute("INSERT INTO sesame_migrations (version, name, applied_at) "
                   "SELECT max(version) + 1, 'future', 0 FROM sesame_migrations")
    message = refused(sesame_bin, tmp_path, newer, "--sealing-key-file", key_file, code="newerSchema")
    assert "newer Sesame" in message


def test_restore_refuses_without_the_sealing_key(sesame_bin, tmp_path, backup_file):
    other = tmp_path / "other-keys"
    other.write_text(sesame(sesame_bin, "seal-keys", "generate").stdout)
    other.chmod(0o600)
    message = refused(sesame_bin, tmp_path, backup_file, "--sealing-key-file", other, code="sealingKeyMissing")
    assert "--sealing-key-file" in message
    refused(sesame_bin, tmp_path, backup_file, code="sealingKeyMissing")


def test_restore_only_into_an_empty_database(sesame_bin, tmp_path, backup_file, key_file):
    target_dir = tmp_path / "target"
    target_dir.mkdir()
    target = target_dir / "sesame.sqlite"
    assert sesame(sesame_bin, "migrate", "--database", target).returncode == 0
    original = target.read_bytes()
    refused(sesame_bin, tmp_path, backup_file, "--sealing-key-file", key_file, code="targetNotEmpty")
    assert target.read_bytes() == original


def test_backup_never_overwrites(sesame_bin, tmp_path, backup_file, key_file):
    database = tmp_path / "live" / "sesame.sqlite"
    original = backup_file.read_bytes()
    result = sesame(sesame_bin, "backup", "--to", backup_file, "--database", database,
                    "--sealing-key-file", key_file)
    assert result.returncode == 1 and "[outputExists]" in result.stderr, result.stderr
    assert backup_file.read_bytes() == original
    assert not [name for name in os.listdir(tmp_path) if ".partial-" in name]


def test_postgres_gets_pg_dump_and_pg_restore_instructions(sesame_bin, tmp_path):
    url = "postgres://sesame@127.0.0.1:1/sesame"
    result = sesame(sesame_bin, "backup", "--to", tmp_path / "b", "--database", url)
    assert result.returncode == 1 and "[postgres]" in result.stderr and "pg_dump --format=custom" in result.stderr
    assert not (tmp_path / "b").exists()
    result = sesame(sesame_bin, "restore", "--from", tmp_path / "b", "--database", url)
    assert result.returncode == 1 and "[postgres]" in result.stderr and "pg_restore" in result.stderr


def test_postgres_advice_followed_under_sign_up_load_restores_every_acknowledged_account(sesame_bin, tmp_path):
    """The commands the advice above gives, run as given: pg_dump while sign-ups go on, pg_restore into an empty
    database, and every account complete before the dump began signs in on the restored one."""
    cluster = tempfile.mkdtemp(prefix="sesame-backup-pg-")  # outside pytest's folder, which postgres cannot enter
    postgres = faults.Postgres(cluster)
    server = faults.Server(sesame_bin, postgres.url, str(tmp_path))
    restored = None
    try:
        server.start()
        load = SignUpLoad(server.port)
        load.start()
        time.sleep(2)
        began = time.monotonic()
        dump = tmp_path / "sesame.dump"
        env = {**os.environ, "SESAME_DATABASE": postgres.url}
        subprocess.run(["sh", "-c", 'pg_dump --format=custom --file="$0" "$SESAME_DATABASE"', str(dump)], env=env,
                       check=True, capture_output=True, timeout=120)
        time.sleep(1)
        load.stop()
        server.stop()
        before = [account for at, account in load.complete if at < began]
        assert len(before) >= 3, f"only {len(before)} accounts were complete before the dump"

        empty = postgres.url.rsplit("/", 1)[0] + "/sesame_restored"
        subprocess.run(["psql", "-X", "-q", postgres.url, "-c", "CREATE DATABASE sesame_restored"], check=True,
                       capture_output=True, timeout=60)
        subprocess.run(["sh", "-c", 'pg_restore --no-owner --dbname="$SESAME_DATABASE" "$0"', str(dump)],
                       env={**os.environ, "SESAME_DATABASE": empty}, check=True, capture_output=True, timeout=120)
        restored = faults.Server(sesame_bin, empty, str(tmp_path))
        restored.start()
        for account in before:
            assert faults.sign_in(restored.port, account), f"{account.username} lost its passkey"
            assert password_and_totp(restored.port, account) is None, f"{account.username} lost a factor"
    finally:
        server.stop()
        if restored:
            restored.stop()
        postgres.stop("fast")
        shutil.rmtree(cluster, ignore_errors=True)
