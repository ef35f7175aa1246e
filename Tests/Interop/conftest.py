"""Shared fixtures for the cross-language checks: the built `sesame` binary, free loopback ports and a headless
Chromium driven by Debian's chromedriver."""

import base64
import http.server
import json
import threading
import os
import pathlib
import shutil
import socket
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    """Under pytest-xdist (scripts/test runs the files on several workers), each worker gets a PostgreSQL database
    of its own beside SESAME_TEST_POSTGRES_URL's, so that servers of tests running at once share no rows (rate-limit
    counters, accounts, the migration lock)."""
    config.addinivalue_line(
        "markers", "alone: measures latency against a goal, so scripts/test runs it after the others, with no other "
        "test beside it")
    config.addinivalue_line(
        "markers", "long: slow by nature (minutes of a fault under load); only `scripts/test --long` runs it")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    base = os.environ.get("SESAME_TEST_POSTGRES_URL")
    if not worker or not base:
        return
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(base)
    name = parts.path.lstrip("/") + "_" + worker
    for statement in (f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"'):
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", base, "-c", statement], check=True,
                       capture_output=True, text=True)
    os.environ["SESAME_TEST_POSTGRES_URL"] = urlunsplit(parts._replace(path="/" + name))


# The longest files, handed out first: pytest-xdist's `--dist loadfile` gives workers whole files in collection order,
# so a long file collected last would run alone at the end while the other workers sit idle.
START_FIRST = ("test_schemathesis.py", "test_schemathesis_links.py")


def pytest_collection_modifyitems(config, items):
    """Moves START_FIRST's files to the front of the collection, keeping every other file's order."""
    def rank(item):
        name = item.path.name
        return START_FIRST.index(name) if name in START_FIRST else len(START_FIRST)
    items.sort(key=rank)  # stable: order within each file and among the rest is kept


def load_faults():
    """scripts/faults as a module: its passkey client (ES256 keys made here, `none` attestation), servers and
    throwaway PostgreSQL clusters, which the backup, upgrade and soak checks reuse."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("sesame_faults", str(ROOT / "scripts" / "faults"))
    spec = importlib.util.spec_from_loader("sesame_faults", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture(scope="session")
def sesame_bin() -> str:
    """Path of the built `sesame` executable: $SESAME_BIN (set by scripts/test), else .build/debug/sesame."""
    path = os.environ.get("SESAME_BIN") or str(ROOT / ".build" / "debug" / "sesame")
    if not os.access(path, os.X_OK):
        pytest.fail(f"sesame binary not found at {path}: run `swift build` or set SESAME_BIN")
    return path


@pytest.fixture
def run_sesame(sesame_bin):
    """Runs `sesame ARGS...` and returns the CompletedProcess (text mode, never raises on exit status)."""

    def run(*args, input=None, timeout=120):
        return subprocess.run(
            [sesame_bin, *map(str, args)], input=input, capture_output=True, text=True, timeout=timeout
        )

    return run


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the session (Debian's chromium + chromedriver, never a downloaded driver).

    Tests add and remove their own virtual authenticators on it."""
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    driver_path = shutil.which("chromedriver")
    browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not driver_path or not browser_path:
        pytest.fail("chromium and chromium-driver (Debian packages) are required; scripts/test installs them")
    options = Options()
    options.binary_location = browser_path
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def start_header_echo(names, key=lambda name: name):
    """An app behind a proxy, on a loopback port: answers every GET with JSON of the path and the request headers
    `names` (each under `key(name)`; an absent header is null). Returns the running server (`.server_port`)."""

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen = {"path": self.path}
            for name in names:
                seen[key(name)] = self.headers.get(name)
            body = json.dumps(seen).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
