"""The outbox against a real SMTP server that misbehaves (issue 29's faults): `sesame serve` as a process, aiosmtpd on
loopback (Tests/SMTPTests/Resources/relay.py, driven line by line on its stdin), mail written to the outbox with
`sesame mail test --outbox`. A relay that defers then accepts, one that refuses, one that takes the connection and
never answers, one stopped with mails queued, `sesame serve` killed with kill -9 while it sends, and two nodes on one
PostgreSQL: every mail reaches the relay exactly once (counted by Message-ID), or is given up once when refused.

The servers run with `--smtp-timeout 1` and `--mail-first-retry-seconds 1` (documented settings) so that no test waits
the defaults out; every wait is for a condition, with a deadline."""

import collections
import json
import os
import pathlib
import re
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

from conftest import free_port

RELAY = pathlib.Path(__file__).resolve().parents[1] / "SMTPTests" / "Resources" / "relay.py"
POSTGRES = os.environ.get("SESAME_TEST_POSTGRES_URL")
ENGINES = ["sqlite"] + (["postgres"] if POSTGRES else [])
TOKEN = "metrics-token-0123456789"


def wait_until(condition, seconds=20, what="the condition"):
    """Polls `condition` until it is true; fails after `seconds` (a deadline, not a wait)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Relay:
    """aiosmtpd without TLS (the server is on the same machine), with a log line per end of DATA."""

    def __init__(self, folder):
        self.out = folder / "relay"
        self.out.mkdir()
        self.log = folder / "relay.log"
        self.log.touch()
        self.process = subprocess.Popen(
            ["python3", str(RELAY), "--mode", "plain", "--out", str(self.out), "--log", str(self.log)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        words = self.process.stdout.readline().split()
        assert len(words) == 3 and words[0] == "READY", "relay.py did not start: aiosmtpd is needed (scripts/test)"
        self.port = int(words[1])

    def command(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().split()
        assert answer and answer[0] == "OK", answer
        return dict(word.split("=") for word in answer[1:])

    def delivered(self):
        """Message-IDs of the mails the relay accepted, one per acceptance."""
        ids = []
        for path in sorted(self.out.glob("*.eml")):
            match = re.search(rb"^Message-ID: *(<[^>]+>)", path.read_bytes(), re.M | re.I)
            ids.append(match.group(1).decode() if match else None)
        return ids

    def attempts(self):
        """(code, Message-ID) for every end of DATA, in order."""
        return [tuple(line.split(" ", 1)) for line in self.log.read_text().splitlines()]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Database:
    """A SQLite file, or a PostgreSQL database of its own beside SESAME_TEST_POSTGRES_URL's."""

    def __init__(self, kind, folder):
        self.kind = kind
        if kind == "sqlite":
            self.url = str(folder / "sesame.sqlite")
        else:
            self.name = "outbox_" + uuid.uuid4().hex[:12]
            self.psql(f'CREATE DATABASE "{self.name}"')
            self.url = urlunsplit(urlsplit(POSTGRES)._replace(path="/" + self.name))

    def psql(self, statement, url=None):
        return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url or POSTGRES, "-c", statement],
                              check=True, capture_output=True, text=True).stdout

    def query(self, statement):
        if self.kind == "sqlite":
            with sqlite3.connect(self.url) as connection:
                return [tuple(row) for row in connection.execute(statement)]
        # psql -At prints NULL as an empty field: read it back as None, as sqlite3 gives it.
        return [tuple(None if field == "" else field for field in line.split("|"))
                for line in self.psql(statement, self.url).splitlines()]

    def drop(self):
        if self.kind == "postgres":
            self.psql(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


class Node:
    """`sesame serve` delivering through the relay, with short timeouts and retries."""

    def __init__(self, sesame_bin, folder, database, relay, name="node", extra=()):
        self.sesame_bin, self.database = sesame_bin, database
        self.port = free_port()
        self.log_path = folder / f"{name}.log"
        self.log = open(self.log_path, "a")
        self.settings = ["--database", database.url, "--smtp-url", f"smtp://127.0.0.1:{relay.port}",
                         "--smtp-from", "Sesame <sesame@example.org>"]
        self.process = subprocess.Popen(
            [sesame_bin, "serve", "--port", str(self.port), "--origin", "http://localhost:8080",
             "--metrics-token", TOKEN, "--smtp-timeout", "1", "--mail-first-retry-seconds", "1", *self.settings,
             *extra],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=folder)
        wait_until(lambda: self.health_or_none() is not None, 30, f"{name} to start: " + self.log_path.read_text())

    def get(self, path, headers=None):
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def health_or_none(self):
        try:
            status, body = self.get("/health")
        except OSError:
            return None
        return json.loads(body) if status == 200 else None

    def health(self):
        status, body = self.get("/health")
        assert status == 200, body
        return json.loads(body)

    def counted(self, result):
        _, text = self.get("/metrics", {"Authorization": "Bearer " + TOKEN})
        match = re.search(r'^sesame_mail_deliveries_total\{result="%s"\} (\d+)' % result, text, re.M)
        return int(match.group(1)) if match else 0

    def queue(self, count=1):
        """Writes `count` test mails to the outbox with `sesame mail test --outbox`."""
        done = subprocess.run([self.sesame_bin, "mail", "test", "--to", "lin@example.net", "--outbox", "--count",
                               str(count), *self.settings], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"queued {count} test mail" in done.stdout

    def audit(self):
        done = subprocess.run([self.sesame_bin, "audit", "--json", "--limit", "100", "--database", self.database.url],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=20)
        self.log.close()


@pytest.fixture
def world(sesame_bin, tmp_path, request):
    """The relay, a database of the engine asked for, and the nodes the test starts (stopped at the end)."""
    relay = Relay(tmp_path)
    database = Database(getattr(request, "param", "sqlite"), tmp_path)
    nodes = []

    def start(name="node", extra=()):
        nodes.append(Node(sesame_bin, tmp_path, database, relay, f"{name}{len(nodes)}", extra))
        return nodes[-1]

    yield relay, database, start
    for node in nodes:
        node.stop()
    relay.stop()
    database.drop()


def once_each(ids):
    counts = collections.Counter(ids)
    return [mid for mid, n in counts.items() if n != 1]


@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_a_relay_that_defers_gets_the_mail_once_when_it_accepts(world):
    relay, _, start = world
    relay.command("defer 1")
    node = start()
    node.queue()
    # The relay writes the mail's file, then its log line: both are waited for.
    wait_until(lambda: len(relay.delivered()) == 1 and len(relay.attempts()) == 2, what="the mail after a deferral")
    [(first, mid), (second, mid2)] = relay.attempts()
    assert (first, second) == ("451", "250") and mid == mid2 == relay.delivered()[0]
    assert node.counted("retried") == 1 and node.counted("sent") == 1
    assert node.health()["mail"] == {"status": "ok", "depth": 0, "oldest_seconds": 0}


@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_a_refused_mail_is_given_up_at_once_and_never_tried_again(world):
    relay, _, start = world
    relay.command("refuse")
    node = start()
    node.queue()
    wait_until(lambda: node.counted("gave_up") == 1, what="the mail to be given up")
    assert [event["detail"] for event in node.audit() if event.get("kind") == "mail.gave_up"] == ["test"]
    [(code, refused)] = relay.attempts()
    assert code == "550"
    assert node.health()["mail"]["depth"] == 0
    # The relay takes mail again: a later mail goes through, the refused one is not tried again.
    relay.command("accept")
    node.queue()
    wait_until(lambda: len(relay.delivered()) == 1, what="the next mail")
    assert refused not in relay.delivered()
    assert [mid for _, mid in relay.attempts()].count(refused) == 1
    assert node.counted("retried") == 0


@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_a_relay_that_never_answers_is_timed_out_and_the_mail_delivered_when_it_behaves(world):
    relay, _, start = world
    relay.command("hang")
    node = start()
    node.queue()
    # The client waits for the greeting for smtp-timeout (1 s), gives up on this try and tries again later.
    wait_until(lambda: node.counted("retried") >= 1, what="the client to time out")
    assert int(relay.command("status")["connections"]) >= 1 and relay.delivered() == []
    assert node.health()["mail"]["depth"] == 1
    relay.command("accept")
    wait_until(lambda: len(relay.delivered()) == 1 and len(relay.attempts()) == 1,
               what="the mail once the relay answers")
    assert relay.attempts() == [("250", relay.delivered()[0])]
    # The relay has the mail once it answers 250; the node marks it sent when that answer reaches it.
    wait_until(lambda: node.health()["mail"]["depth"] == 0, what="the outbox to empty")


@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_the_relay_stopped_with_mails_queued_loses_none_and_sends_each_once(world):
    relay, _, start = world
    relay.command("stop")
    node = start()
    node.queue(12)
    wait_until(lambda: node.counted("retried") >= 12, what="every mail to fail once")
    assert node.health()["mail"]["depth"] == 12
    relay.command("accept")
    wait_until(lambda: len(relay.delivered()) >= 12, what="the twelve mails")
    wait_until(lambda: node.health()["mail"]["depth"] == 0, what="the outbox to empty")
    delivered = relay.delivered()
    assert len(delivered) == 12 and len(set(delivered)) == 12 and once_each(delivered) == []


@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_a_node_killed_while_it_sends_delivers_after_restart_once(world):
    """The lease (15 × smtp-timeout) is waited out once per engine: the row the dead node leased is taken again."""
    relay, database, start = world
    relay.command("hang")
    node = start()
    node.queue()
    # The node took the mail and is waiting for the relay's greeting: killed between the commit and the send.
    wait_until(lambda: int(relay.command("status")["connections"]) >= 1, what="the node to connect")
    node.kill()
    [(attempts, leased_until, sent_at)] = database.query("SELECT attempts, leased_until, sent_at FROM mail_outbox")
    assert int(attempts) == 1 and leased_until is not None and sent_at is None
    relay.command("accept")
    restarted = start()
    assert restarted.health()["mail"]["depth"] == 1
    # Taken again once the dead node's lease ends (15 s here).
    wait_until(lambda: len(relay.delivered()) == 1, 40, "the mail after the restart")
    wait_until(lambda: restarted.health()["mail"]["depth"] == 0, what="the outbox to empty")
    assert relay.attempts() == [("250", relay.delivered()[0])]


@pytest.mark.skipif(not POSTGRES, reason="needs SESAME_TEST_POSTGRES_URL (scripts/test starts PostgreSQL)")
@pytest.mark.parametrize("world", ["postgres"], indirect=True)
def test_two_nodes_on_one_postgresql_send_each_mail_once(world):
    relay, _, start = world
    first, second = start(), start()
    # Enough that one node cannot drain them all before the other's next tick (each ticks once a second).
    first.queue(600)
    wait_until(lambda: len(relay.delivered()) >= 600, 40, "600 mails")
    wait_until(lambda: first.health()["mail"]["depth"] == 0, what="the outbox to empty")
    delivered = relay.delivered()
    assert len(delivered) == 600 and once_each(delivered) == []
    # Both nodes sent: the mails were shared, not sent by one while the other sat idle.
    assert first.counted("sent") > 0 and second.counted("sent") > 0
    assert first.counted("sent") + second.counted("sent") == 600


def sign_up(node, sesame_bin, store, username, address, client):
    """A passkey sign-up over HTTP that gives an address (`--email=required`): options, a credential from
    `sesame authenticator create`, the finish; the account and its verification mail are one transaction. `client`
    is the person's address (X-Forwarded-For, trusted by the node), so that each is rate limited as its own."""
    def post(path, body, headers=None):
        request = urllib.request.Request(
            f"http://127.0.0.1:{node.port}{path}", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-Forwarded-For": client, **(headers or {})})
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, json.loads(response.read())

    status, headers, options = post(
        "/api/registration/options", {"username": username, "displayName": username, "email": address})
    assert status == 200, options
    made = subprocess.run(
        [sesame_bin, "authenticator", "create", "--origin", "http://localhost:8080", "--options", "-", "--store",
         str(store)], input=json.dumps(options), capture_output=True, text=True, timeout=30)
    assert made.returncode == 0, made.stderr
    status, _, body = post("/api/registration", {"credential": json.loads(made.stdout)},
                           {"Sesame-Ceremony": headers["Sesame-Ceremony"]})
    assert status == 201, body


@pytest.mark.long
@pytest.mark.parametrize("world", ENGINES, indirect=True)
def test_the_relay_stopped_for_a_minute_under_sign_ups_loses_no_mail_and_sends_each_once(world, sesame_bin, tmp_path):
    """Issue 29's fault: the SMTP server stopped for a minute while people sign up (each sign-up writes its
    verification mail in the account's transaction); when it is back every mail arrives, each once. Slow by nature
    (a minute of sign-ups, then the sender's backoff of up to a minute): `scripts/test --long` runs it."""
    relay, _, start = world
    node = start(extra=("--email", "required", "--trust-forwarded-for", "true"))
    relay.command("stop")
    store = tmp_path / "credentials.json"
    stopped_until = time.monotonic() + 60
    addresses = []
    while time.monotonic() < stopped_until:
        n = len(addresses)
        addresses.append(f"person{n}@example.net")
        sign_up(node, sesame_bin, store, f"person{n}", addresses[-1], f"10.{n // 250}.{n % 250}.1")
    assert node.health()["mail"]["depth"] > 0 and relay.delivered() == []
    relay.command("accept")
    # The longest backoff reached within a minute of failures is 64 s (1 s doubling).
    wait_until(lambda: len(relay.delivered()) >= len(addresses), seconds=240, what="every verification mail")
    wait_until(lambda: node.health()["mail"]["depth"] == 0, what="the outbox to empty")
    delivered = relay.delivered()
    assert len(delivered) == len(addresses) and once_each(delivered) == []
    recipients = sorted(re.search(rb"^To: *(\S+)", path.read_bytes(), re.M).group(1).decode()
                        for path in relay.out.glob("*.eml"))
    assert recipients == sorted(addresses)
