"""Upgrades (issue 18; docs/deploy.md, "Upgrades"), over HTTP with the built binaries:

- a database each earlier release wrote (Tests/Fixtures/Upgrades, made by `scripts/upgrade-fixture` with that
  release's binary) migrates to this version's schema, and the people in it sign in as before: passkey, password with
  an authenticator app, recovery codes (the spent one stays spent); its OpenID Connect client is still registered;
- on PostgreSQL, a node of the previous release and a node of this version share one database during the migration
  (the new node migrates while the old one serves): every ceremony, including those begun on one node and finished
  on the other, succeeds on both, and nothing answers 5xx;
- a node refuses to start on a database a newer Sesame contracted (a change it does not know), exit status 2.

The previous release's binary is built from its commit by `scripts/old-node` (scripts/test runs it first)."""

import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time

import pyotp
import pytest
from cryptography.hazmat.primitives import serialization

from conftest import ROOT, b64url_decode, load_faults


faults = load_faults()
FIXTURES = ROOT / "Tests" / "Fixtures" / "Upgrades"
RELEASES = sorted((p.name for p in FIXTURES.iterdir() if p.is_dir()),
                  key=lambda name: [int(part) for part in name.split(".")])
PREVIOUS = RELEASES[-1]


def old_binary(version):
    """The release's binary, built by scripts/old-node (reused when built already)."""
    done = subprocess.run([str(ROOT / "scripts" / "old-node"), version], capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, f"scripts/old-node {version} failed:\n{done.stderr[-4000:]}"
    return done.stdout.strip().splitlines()[-1]


def current_schema(sesame_bin, database):
    done = subprocess.run([sesame_bin, "migrate"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SESAME_DATABASE": database})
    assert done.returncode == 0, done.stderr
    return done.stdout


def person(record):
    account = faults.Account(record["username"])
    account.key = serialization.load_pem_private_key(record["privateKeyPEM"].encode(), password=None)
    account.credential_id = b64url_decode(record["credentialID"])
    account.user_handle = record["userHandle"]
    return account


def password_and_code(port, username, factor, code):
    first = faults.call(port, "POST", "/api/sessions/password", {"username": username, "password": faults.PASSWORD})
    if first.status != 200 or "pendingToken" not in first.body:
        return first.status
    second = faults.call(port, "POST", "/api/sessions/second-factor",
                         {"factor": factor, "code": code, "pendingToken": first.body["pendingToken"]})
    return second.status


@pytest.fixture
def cluster_dir():
    """A folder for a throwaway PostgreSQL cluster outside pytest's own (which the postgres user cannot enter)."""
    path = tempfile.mkdtemp(prefix="sesame-upgrade-pg-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def release_database(release, engine, tmp_path, cluster_dir):
    """A fresh database holding the release's fixture: its `--database` value, and its cluster on PostgreSQL."""
    if engine == "sqlite":
        path = tmp_path / "sesame.sqlite"
        shutil.copyfile(FIXTURES / release / "sqlite.sqlite", path)
        # The server refuses a live database others may read (it holds the server secret): the operator's chmod.
        os.chmod(path, 0o600)
        return str(path), None
    postgres = faults.Postgres(cluster_dir)
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", postgres.url, "-f",
                    str(FIXTURES / release / "postgres.sql")], check=True, capture_output=True, timeout=120)
    return postgres.url, postgres


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
@pytest.mark.parametrize("release", RELEASES)
def test_release_database_upgrades_and_its_people_sign_in(sesame_bin, tmp_path, cluster_dir, release, engine):
    manifest = json.loads((FIXTURES / release / "people.json").read_text())
    people = manifest[engine]
    database, postgres = release_database(release, engine, tmp_path, cluster_dir)
    server = faults.Server(sesame_bin, database, str(tmp_path))
    try:
        fresh = current_schema(sesame_bin, str(tmp_path / "fresh.sqlite"))
        assert f"schema at version {manifest['schema']} " not in fresh, "this version adds no migration to test"
        assert current_schema(sesame_bin, database) == fresh
        server.start()
        for record in people["people"]:
            assert faults.sign_in(server.port, person(record)), f"{record['username']} cannot sign in with a passkey"
        bob = people["people"][1]["username"]
        totp = pyotp.TOTP(people["totpSecret"])
        assert password_and_code(server.port, bob, "totp", totp.now()) == 200
        assert password_and_code(server.port, bob, "recovery", people["spentRecoveryCode"]) == 401
        assert password_and_code(server.port, bob, "recovery", people["unspentRecoveryCodes"][0]) == 200
        assert password_and_code(server.port, bob, "recovery", people["unspentRecoveryCodes"][0]) == 401
        listed = subprocess.run([sesame_bin, "clients", "list"], capture_output=True, text=True, timeout=120,
                                env={**os.environ, "SESAME_DATABASE": database})
        assert listed.returncode == 0 and "Fixture App" in listed.stdout, listed.stdout + listed.stderr
        if engine == "sqlite":
            with sqlite3.connect(database) as connection:
                assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        server.stop()
        if postgres:
            postgres.stop("fast")


class CrossTraffic:
    """Threads that sign up on one node and sign in on the other, half of the ceremonies finished on the node that
    did not begin them; records every failure."""

    def __init__(self, ports):
        self.ports = ports
        self.stopping = threading.Event()
        self.failures = []
        self.done = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.work, args=(i,), daemon=True) for i in range(4)]

    def work(self, index):
        n = 0
        while not self.stopping.is_set():
            n += 1
            begin, other = (self.ports[0], self.ports[1]) if (index + n) % 2 else (self.ports[1], self.ports[0])
            account = faults.Account(f"cross-{index}-{n}-{time.monotonic_ns()}")
            crossed = n % 2 == 0
            if not faults.sign_up(begin, account, finish_port=other if crossed else None):
                self.fail(f"sign-up begun on {begin} (crossed: {crossed})")
                continue
            if not faults.sign_in(other, account, finish_port=begin if crossed else None):
                self.fail(f"sign-in begun on {other} (crossed: {crossed})")
                continue
            with self.lock:
                self.done += 1

    def fail(self, what):
        with self.lock:
            self.failures.append(what)

    def wait_for(self, count, seconds=120):
        """Waits until `count` sign-up + sign-in pairs have completed in all (or a failure stops the wait)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if self.done >= count or self.failures:
                    return self.done
            self.stopping.wait(0.05)
        raise AssertionError(f"only {self.done} of {count} sign-up + sign-in pairs completed in {seconds} s")

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)


def test_previous_release_and_this_one_share_postgres_during_the_migration(sesame_bin, tmp_path, cluster_dir):
    previous = old_binary(PREVIOUS)
    postgres = faults.Postgres(cluster_dir)
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = faults.Server(previous, postgres.url, str(tmp_path / "old"))
    new = faults.Server(sesame_bin, postgres.url, str(tmp_path / "new"))
    try:
        old.start()
        before = int(postgres.query("SELECT max(version) FROM sesame_migrations"))
        # An account of the old node's making with every factor, used on both nodes below.
        bob = faults.Account("upgrade-bob")
        assert faults.sign_up(old.port, bob)
        faults.prepare_recovery(old.port, bob)
        # The new node migrates while the old one serves: traffic on the old node before, during and after.
        with CrossTraffic([old.port, old.port]) as alone:
            started = alone.wait_for(4)
            new.start()
            alone.wait_for(started + 4)
        after = int(postgres.query("SELECT max(version) FROM sesame_migrations"))
        assert after > before, "the new node applied no migration: nothing was tested"
        # Every thread alternates which node begins and which finishes: 40 pairs cross the two nodes both ways.
        with CrossTraffic([old.port, new.port]) as together:
            together.wait_for(40)
        assert alone.failures == [] and together.failures == [], alone.failures + together.failures
        assert alone.done > 0 and together.done > 0
        print(f"schema {before} -> {after}; sign-up + sign-in pairs: {alone.done} on the old node while the new one "
              f"migrated, {together.done} across both nodes")
        for port, code in ((old.port, bob.recovery_codes[0]), (new.port, bob.recovery_codes[1])):
            assert faults.use_recovery_code(port, bob, code)
        for port in (old.port, new.port):
            assert not faults.use_recovery_code(port, bob, bob.recovery_codes[0]), "a spent code worked on a node"
        # Both nodes stayed up, and neither logged an error.
        for server in (old, new):
            assert server.process.poll() is None
            log = open(os.path.join(server.workdir, "server.log")).read()
            assert "error" not in log.lower(), log[-4000:]
    finally:
        old.stop()
        new.stop()
        postgres.stop("fast")


def test_a_node_refuses_a_database_a_newer_release_contracted(sesame_bin, tmp_path):
    database = str(tmp_path / "sesame.sqlite")
    env = {**os.environ, "SESAME_DATABASE": database}
    assert subprocess.run([sesame_bin, "migrate"], capture_output=True, timeout=120, env=env).returncode == 0
    with sqlite3.connect(database) as connection:
        newest = connection.execute("SELECT max(version) FROM sesame_migrations").fetchone()[0]
        connection.execute("INSERT INTO sesame_migrations (version, name, applied_at, schema_change) "
                           "VALUES (?, 'a newer release: drops a column', 0, 'contract')", (newest + 1,))
    for command in (["migrate"], ["serve", "--port", "0"]):
        done = subprocess.run([sesame_bin, *command], capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 2, done.stderr
        assert f"schema change {newest + 1}" in done.stderr and "Upgrade this node" in done.stderr, done.stderr
