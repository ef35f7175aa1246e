"""`sesame serve` as a process: graceful shutdown, admin commands, password + TOTP codes from pyotp, SMS codes
through the console sender (schemathesis against the served OpenAPI document is in test_schemathesis.py). Runs on
SQLite, and on PostgreSQL when SESAME_TEST_POSTGRES_URL is set (scripts/test starts one)."""

import http.server
import json
import os
import re
import threading
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pyotp
import pytest

from conftest import ROOT, free_port

DATABASES = ["sqlite"] + (["postgres"] if os.environ.get("SESAME_TEST_POSTGRES_URL") else [])


# /health on a node with nothing waiting in its outbox.
HEALTHY = {"database": "ok", "status": "ok", "mail": {"status": "ok", "depth": 0, "oldest_seconds": 0}}


def psql(url, statement):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", statement], check=True, capture_output=True,
                   text=True, timeout=60)


class Server:
    def __init__(self, sesame_bin, tmp_path, database, extra=(), url=None):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = tmp_path / "serve.log"
        self.own_database = None
        if url:
            self.database = url  # a restart on the database an earlier server left
        elif database == "postgres":
            # A database of its own: servers of tests that run at once never share accounts or the per-address
            # rate-limit buckets (one test's failed sign-ins would refuse another's with 429).
            self.own_database = "sesame_t_" + secrets.token_hex(6)
            base = os.environ["SESAME_TEST_POSTGRES_URL"]
            psql(base, f'CREATE DATABASE "{self.own_database}"')
            self.database = base.rsplit("/", 1)[0] + "/" + self.own_database
        else:
            self.database = str(tmp_path / "sesame.sqlite")
        self.common = ["--database", self.database, "--password-scrypt-log-n", "10"]
        self.sesame_bin = sesame_bin
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [sesame_bin, "serve", "--port", str(self.port), "--origin", "http://localhost:8080", *self.common, *extra],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=tmp_path,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if self.request("GET", "/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("server did not start: " + self.log_path.read_text())

    def request(self, method, path, body=None, token=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        # These tests act as a native app: pages get no session token in the body.
        request.add_header("Sesame-Client", "native")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, (json.loads(raw) if raw[:1] in (b"{", b"[") else raw)
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, (json.loads(raw) if raw[:1] == b"{" else raw)

    def admin(self, *args, input=None):
        return subprocess.run([self.sesame_bin, *args, *self.common], input=input, capture_output=True, text=True, timeout=60)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=20)
        self.log.close()
        return code

    def drop_database(self):
        """Removes the database this server made for itself (PostgreSQL), once no server uses it."""
        if self.own_database:
            psql(os.environ["SESAME_TEST_POSTGRES_URL"], f'DROP DATABASE IF EXISTS "{self.own_database}" WITH (FORCE)')


@pytest.fixture(params=DATABASES)
def server(request, sesame_bin, tmp_path):
    s = Server(sesame_bin, tmp_path, request.param)
    yield s
    if s.process.poll() is None:
        s.stop()
    s.drop_database()


def new_user(server, password="correct horse battery"):
    name = "u" + secrets.token_hex(6)
    result = server.admin("users", "create", name, input=password + "\n")
    assert result.returncode == 0, result.stderr
    return name, password


def sign_in(server, name, password):
    status, body = server.request("POST", "/api/sessions/password", {"username": name, "password": password})
    assert status == 200, body
    return body


def test_graceful_shutdown_on_sigterm(server):
    assert server.request("GET", "/health") == (200, HEALTHY)
    assert server.stop() == 0
    log = server.log_path.read_text()
    assert "Server started" in log


def test_kill_9_after_answers_loses_no_sign_in(server, sesame_bin, tmp_path):
    # Every sign-in answered 200 was committed before the answer: after SIGKILL (no shutdown, no checkpoint) and a
    # restart on the same database, each of their sessions is still valid and each sign-in is in the audit log.
    name, password = new_user(server)
    tokens = [sign_in(server, name, password)["sessionToken"] for _ in range(20)]
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=20)
    server.log.close()
    restarted = Server(sesame_bin, tmp_path, "postgres" if server.database.startswith("postgres") else "sqlite",
                       url=server.database)
    try:
        for token in tokens:
            status, body = restarted.request("GET", "/api/account", token=token)
            assert (status, body["user"]["username"]) == (200, name), body
        audit = restarted.admin("audit", "--user", name, "--json")
        kinds = [json.loads(line)["kind"] for line in audit.stdout.splitlines()]
        assert kinds.count("sign_in.password") == 20, kinds
    finally:
        restarted.stop()


def test_admin_commands(server):
    name, password = new_user(server)
    listed = server.admin("users", "list")
    assert name in listed.stdout
    shown = server.admin("users", "show", name.upper())
    assert "password:     yes" in shown.stdout
    assert server.admin("users", "disable", name).returncode == 0
    status, body = server.request("POST", "/api/sessions/password", {"username": name, "password": password})
    assert (status, body["error"]) == (403, "account_disabled")
    assert server.admin("users", "enable", name).returncode == 0
    sign_in(server, name, password)
    audit = server.admin("audit", "--user", name, "--json")
    kinds = [json.loads(line)["kind"] for line in audit.stdout.splitlines()]
    assert "sign_in.password" in kinds and "admin.disabled" in kinds and "admin.created" in kinds
    assert password not in audit.stdout
    assert server.admin("users", "delete", name).returncode == 2  # needs --yes
    assert server.admin("users", "delete", name, "--yes").returncode == 0
    assert server.admin("users", "show", name).returncode != 0
    assert server.admin("migrate").stdout.startswith("schema at version")


def test_password_then_totp_codes_from_pyotp(server):
    name, password = new_user(server)
    token = sign_in(server, name, password)["sessionToken"]
    status, setup = server.request("POST", "/api/account/totp", token=token)
    assert status == 201
    totp = pyotp.parse_uri(setup["otpauthURI"])
    assert totp.secret == setup["secret"]
    now = time.time()
    status, _ = server.request("POST", "/api/account/totp/confirm", {"code": totp.at(now)}, token=token)
    assert status == 200

    status, pending = server.request("POST", "/api/sessions/password", {"username": name, "password": password})
    assert pending["status"] == "second_factor_required" and pending["factors"] == ["totp"]
    # The confirming code is spent; the next step's code (inside the ±1 window) is fresh.
    replay = server.request("POST", "/api/sessions/second-factor", {"factor": "totp", "code": totp.at(now), "pendingToken": pending["pendingToken"]})
    assert replay[0] == 401
    status, signed = server.request(
        "POST", "/api/sessions/second-factor", {"factor": "totp", "code": totp.at(now + 30), "pendingToken": pending["pendingToken"]}
    )
    assert status == 200 and signed["status"] == "signed_in"
    # Nothing secret reaches the log.
    log = server.log_path.read_text()
    for secret in (password, token, signed["sessionToken"], setup["secret"], totp.at(now), totp.at(now + 30), pending["pendingToken"]):
        assert secret not in log


def documented_settings():
    """(key, flag, environment variable) of every row of docs/configuration.md's table (VocabularyTests ties the
    table to the code's settings table)."""
    rows = re.findall(r"^\| `([A-Za-z]+)` \| `(--[a-z-]+)` \| `(SESAME_[A-Z_]+)` \|", (ROOT / "docs" / "configuration.md").read_text(), re.M)
    assert len(rows) > 20
    return rows


def test_serve_help_lists_every_setting(run_sesame):
    result = run_sesame("serve", "--help")
    assert result.returncode == 0
    assert "SESAME_CONFIG" in result.stdout
    for key, flag, variable in documented_settings():
        assert f"  {flag} <value>" in result.stdout, key
        assert variable in result.stdout, key


def test_serve_refuses_unknown_and_valueless_flags(run_sesame):
    for words, said in ((["--no-such-setting", "1"], "unknown option --no-such-setting"), (["--port"], "--port needs a value"),
                        (["--port", "99999"], "port")):
        result = run_sesame("serve", *words)
        assert result.returncode != 0
        assert said in result.stderr


@pytest.mark.parametrize("executor", ["event-loops", "global"])
def test_each_task_executor_serves_and_stops(sesame_bin, tmp_path, executor):
    """`--task-executor`: handlers on the event loops (the default, which every other test here runs on) and on
    Swift's own pool both sign people in, concurrently, and stop gracefully. Eight accounts sign in at once, each
    one sign-in after another (the per-account limit counts attempts in flight)."""
    server = Server(sesame_bin, tmp_path, "sqlite", extra=("--task-executor", executor))
    try:
        users = [new_user(server) for _ in range(8)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(lambda user: [sign_in(server, *user)["status"] for _ in range(4)], users))
        assert answers == [["signed_in"] * 4] * 8
        assert server.request("GET", "/health") == (200, HEALTHY)
    finally:
        assert server.stop() == 0


def test_serve_refuses_an_unknown_task_executor(run_sesame):
    result = run_sesame("serve", "--task-executor", "threads")
    assert result.returncode == 2
    assert "task-executor: expected event-loops or global" in result.stderr


def test_sms_code_through_the_console_sender(server):
    name, password = new_user(server)
    token = sign_in(server, name, password)["sessionToken"]
    status, _ = server.request("PUT", "/api/account/sms", {"phone": "+15551234567"}, token=token)
    assert status == 202
    code = wait_for_code(server)
    assert server.request("POST", "/api/account/sms/confirm", {"code": code}, token=token)[0] == 200

    status, pending = server.request("POST", "/api/sessions/password", {"username": name, "password": password})
    assert pending["factors"] == ["sms"]
    assert server.request("POST", "/api/sessions/second-factor/sms", {"pendingToken": pending["pendingToken"]})[0] == 202
    code = wait_for_code(server, skip=1)
    status, signed = server.request("POST", "/api/sessions/second-factor", {"factor": "sms", "code": code, "pendingToken": pending["pendingToken"]})
    assert status == 200, signed


def wait_for_code(server, skip=0):
    """The code from the latest origin-bound message (`@localhost #123456`) the console sender printed."""
    deadline = time.time() + 10
    while time.time() < deadline:
        server.log.flush()
        codes = re.findall(r"^@localhost #(\d{6})$", server.log_path.read_text(), re.M)
        if len(codes) > skip:
            return codes[-1]
        time.sleep(0.2)
    raise AssertionError("no SMS printed: " + server.log_path.read_text())


def test_sms_webhook_sender_posts_the_origin_bound_message(sesame_bin, tmp_path):
    received = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers["Content-Length"])
            received.append((self.headers["Content-Type"], json.loads(self.rfile.read(length))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    hook = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    server = Server(sesame_bin, tmp_path, "sqlite", extra=["--sms-sender", f"http://127.0.0.1:{hook.server_port}/sms"])
    try:
        name, password = new_user(server)
        token = sign_in(server, name, password)["sessionToken"]
        assert server.request("PUT", "/api/account/sms", {"phone": "+447700900123"}, token=token)[0] == 202
        content_type, body = received[-1]
        assert content_type == "application/json"
        assert body["to"] == "+447700900123"
        code = re.search(r"^@localhost #(\d{6})$", body["message"], re.M).group(1)
        assert server.request("POST", "/api/account/sms/confirm", {"code": code}, token=token)[0] == 200
        # A webhook that fails makes the request fail visibly (502), not silently.
        hook.shutdown()
        hook.server_close()
        status, error = server.request("PUT", "/api/account/sms", {"phone": "+447700900124"}, token=token)
        assert (status, error["error"]) == (502, "sms_not_sent")
    finally:
        server.stop()


def test_head_answers_like_get_without_a_body(server):
    """HEAD over a real connection: GET's status and Content-Length, no body, and the kept-alive connection still
    frames the next answer correctly."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for path in ["/openapi.yaml", "/health", "/.well-known/webauthn", "/static/sesame.css"]:
        connection.request("GET", path)
        get = connection.getresponse()
        body = get.read()
        connection.request("HEAD", path)
        head = connection.getresponse()
        assert head.read() == b""
        assert head.status == get.status == 200
        assert head.getheader("Content-Length") == str(len(body))
        assert head.getheader("Content-Type") == get.getheader("Content-Type")
    connection.request("HEAD", "/api/sessions/password")
    refused = connection.getresponse()
    assert (refused.status, refused.getheader("Allow"), refused.read()) == (405, "POST", b"")
    connection.request("GET", "/health")
    assert json.loads(connection.getresponse().read()) == HEALTHY
    connection.close()


def test_sealing_key_file_move_and_missing_key(sesame_bin, tmp_path):
    """A TOTP secret sealed under the database key moves to a file key with `seal-keys rotate`; a server with the
    key file signs in with codes from pyotp; one without it answers 500 (no crash, no secret); a bad key file stops
    `serve` with a message naming the line, never the key. SQLite only: rotation covers every row of the database,
    and the PostgreSQL database here is shared by runs (SealingKeyTests runs rotation on PostgreSQL per schema)."""
    server = Server(sesame_bin, tmp_path, "sqlite")
    name, password = new_user(server)
    token = sign_in(server, name, password)["sessionToken"]
    status, setup = server.request("POST", "/api/account/totp", token=token)
    assert status == 201
    totp = pyotp.parse_uri(setup["otpauthURI"])
    now = time.time()
    assert server.request("POST", "/api/account/totp/confirm", {"code": totp.at(now)}, token=token)[0] == 200

    key = subprocess.run([sesame_bin, "seal-keys", "generate"], capture_output=True, text=True, timeout=30).stdout.strip()
    assert len(key) == 44
    key_file = tmp_path / "sealing.key"
    key_file.write_text("# sealing key\n" + key + "\n")
    key_file.chmod(0o600)
    before = server.admin("seal-keys", "status", "--sealing-key-file", str(key_file))
    assert before.returncode == 0, before.stderr
    assert "under database (open only)" in before.stdout
    key_id = before.stdout.splitlines()[0].split()[2]
    assert "accessible to group or others" not in before.stderr
    rotated = server.admin("seal-keys", "rotate", "--sealing-key-file", str(key_file))
    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout.startswith("resealed ")
    after = server.admin("seal-keys", "status", "--sealing-key-file", str(key_file))
    assert f"totp: " in after.stdout and "under database" not in after.stdout and f"file key {key_id} (sealing)" in after.stdout
    assert server.stop() == 0

    key_file.chmod(0o640)  # too open: the server warns (and still starts)
    with_key = Server(sesame_bin, tmp_path, "sqlite", extra=["--sealing-key-file", str(key_file)])
    try:
        _, pending = with_key.request("POST", "/api/sessions/password", {"username": name, "password": password})
        status, signed = with_key.request(
            "POST", "/api/sessions/second-factor", {"factor": "totp", "code": totp.at(now + 30), "pendingToken": pending["pendingToken"]}
        )
        assert (status, signed["status"]) == (200, "signed_in")
    finally:
        assert with_key.stop() == 0
    log = with_key.log_path.read_text()
    assert key_id in log and key not in log
    assert "accessible to group or others" in log

    without_key = Server(sesame_bin, tmp_path, "sqlite")
    try:
        # The password step already reads the TOTP row (to name the factors), which names a key this node lacks.
        status, body = without_key.request("POST", "/api/sessions/password", {"username": name, "password": password})
        assert (status, body["error"]) == (500, "internal_error")
    finally:
        assert without_key.stop() == 0
    log = without_key.log_path.read_text()
    assert "not in the key file" in log and key_id in log and setup["secret"] not in log

    bad = tmp_path / "bad.key"
    bad.write_text(key[:20] + "\n")
    started = subprocess.run([sesame_bin, "serve", "--port", "0", *server.common, "--sealing-key-file", str(bad)],
                             capture_output=True, text=True, timeout=60)
    assert started.returncode != 0
    assert f"sealing key file {bad}, line 1" in started.stderr and key[:20] not in started.stderr
