"""Forward auth's access rules behind a real Caddy (Debian's, `forward_auth` with `copy_headers`), against a real
`sesame serve`, in Chromium (issue 30).

Layout, all on loopback:
- `sesame serve` at http://localhost:S with `forwardAuthRules` for two hosts:
  `team.localhost` lets every signed-in person in except under `/private` (nobody) and `/family` (members of the
  group `family`, made with `sesame groups` and `sesame users groups`), and `keys.localhost` only a passkey sign-in;
- Caddy at http://team.localhost:C and http://keys.localhost:C, as docs/integrations.md writes it: the client's
  `Remote-*` headers removed, the check, Sesame's identity headers copied onto the request, then the app; and
  `/_sesame/callback` on each host forwarded to Sesame (the apps are outside Sesame's host-only cookie, so the
  one-time code exchange runs);
- a small upstream (Python `http.server`) that echoes the identity headers Caddy gives it.
"""

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import free_port, start_header_echo
from test_browser_flows import (  # noqa: F401  (fixtures used by name)
    Server, authenticator, browser, find, password_sign_in, restore, screenshot, sign_out, sign_up, signed_in, wait,
    without_autofill)
from test_forward_auth_nginx import NoRedirect

RULES = json.dumps([
    {"host": "team.localhost", "path": "/private", "policy": "nobody"},
    {"host": "team.localhost", "path": "/family", "policy": "groups", "groups": ["family"]},
    {"host": "team.localhost", "policy": "signed-in"},
    {"host": "keys.localhost", "policy": "passkey"},
])

IDENTITY = ["Remote-User", "Remote-Name", "Remote-Amr", "Remote-Email", "Remote-Groups"]

CADDYFILE = """
{{
    admin off
    auto_https off
    storage file_system {dir}/data
}}

http://team.localhost:{port}, http://keys.localhost:{port} {{
    bind 127.0.0.1
    handle /_sesame/callback {{
        rewrite * /forward-auth/callback?{{query}}
        reverse_proxy 127.0.0.1:{sesame}
    }}
    handle {{
        route {{
{strip}
            forward_auth 127.0.0.1:{sesame} {{
                uri /forward-auth
                copy_headers {identity}
            }}
            reverse_proxy 127.0.0.1:{upstream}
        }}
    }}
}}
"""


@pytest.fixture
def caddy(sesame_bin, tmp_path):
    """Sesame, the upstream and Caddy; yields (server, Caddy's port)."""
    if not shutil.which("caddy"):
        pytest.fail("caddy (Debian package) is required; scripts/test installs it")
    upstream = start_header_echo(IDENTITY)
    port = free_port()
    sesame = Server(sesame_bin, tmp_path, extra_args=[
        "--forward-auth-domains=team.localhost,keys.localhost", f"--forward-auth-rules={RULES}"])
    directory = tmp_path / "caddy"
    directory.mkdir()
    caddyfile = directory / "Caddyfile"
    caddyfile.write_text(CADDYFILE.format(
        dir=directory, port=port, sesame=sesame.port, upstream=upstream.server_address[1],
        identity=" ".join(IDENTITY), strip="\n".join(f"            request_header -{name}" for name in IDENTITY)))
    log = open(directory / "caddy.log", "w")
    environment = {"HOME": str(directory), "XDG_CONFIG_HOME": str(directory), "XDG_DATA_HOME": str(directory),
                   "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(["caddy", "run", "--config", str(caddyfile), "--adapter", "caddyfile"],
                               stdout=log, stderr=subprocess.STDOUT, env=environment)
    try:
        deadline = time.time() + 20
        while True:
            status, _, _ = raw_get(port, f"team.localhost:{port}", "/_ready")
            if status:
                break
            if process.poll() is not None or time.time() > deadline:
                log.flush()
                pytest.fail(f"caddy did not start:\n{(directory / 'caddy.log').read_text()[-2000:]}")
            time.sleep(0.1)
        yield sesame, port
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()
        sesame.stop()
        upstream.shutdown()


def raw_get(port, host, path, headers=None):
    """GET through Caddy with this Host header, redirects not followed: (status, headers, body); status 0 when
    nothing answers yet."""
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host, **(headers or {})})
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()
    except (urllib.error.URLError, ConnectionError, OSError):
        return 0, {}, b""


def body_json(browser):
    return json.loads(browser.find_element("tag name", "body").text)


def test_caddy_applies_each_hosts_rules_and_drops_forged_identity_headers(browser, caddy):
    server, port = caddy
    team = f"http://team.localhost:{port}"
    keys = f"http://keys.localhost:{port}"
    forged = {"Remote-User": "root", "Remote-Groups": "admins", "Remote-Email": "root@example.com"}

    # Signed out, with forged identity headers: sent to sign in, never to the app; the shut path is shut at once.
    status, headers, _ = raw_get(port, f"team.localhost:{port}", "/hello", forged)
    assert status == 302
    assert headers["Location"] == f"{team}/_sesame/callback?rd=" + urllib.parse.quote(f"{team}/hello", safe="")
    status, headers, body = raw_get(port, f"team.localhost:{port}", "/private/x", forged)
    assert status == 403 and "Location" not in headers
    assert "You don’t have access to team.localhost" in body.decode()

    # A passkey account, then a password sign-in on it (the same person, signed in without a passkey).
    authenticator(browser)
    sign_up(browser, server, "ada", "Ada Lovelace", password="correct horse battery staple")
    saved = sign_out(browser, server)
    password_sign_in(browser, server, "ada", "correct horse battery staple")
    signed_in(browser, server)

    # team: any signed-in person, through the code exchange; the app sees Sesame's headers only.
    browser.get(f"{team}/hello?x=1")
    wait(browser, lambda d: d.current_url == f"{team}/hello?x=1", what="the team app")
    seen = body_json(browser)
    assert seen["Remote-User"] == "ada" and seen["Remote-Name"] == "Ada Lovelace" and seen["Remote-Amr"] == "pwd"
    assert not seen["Remote-Groups"] and not seen["Remote-Email"]

    # The forged headers with the app's cookie: replaced or removed, never passed on.
    cookie = {c["name"]: c["value"] for c in browser.get_cookies()}["sesame_forward"]
    status, _, body = raw_get(port, f"team.localhost:{port}", "/again", {"Cookie": f"sesame_forward={cookie}", **forged})
    seen = json.loads(body)
    assert status == 200 and seen["Remote-User"] == "ada"
    assert not seen["Remote-Groups"] and not seen["Remote-Email"]

    # /family: members of the group only. Outside it: 403; put in with the operator's commands: in at the next
    # request, the group in Remote-Groups (a forged one still replaced); taken out: refused at the next request.
    family_get = lambda: raw_get(port, f"team.localhost:{port}", "/family/photos",  # noqa: E731
                                 {"Cookie": f"sesame_forward={cookie}", **forged})
    status, _, body = family_get()
    assert status == 403 and b"ada" in body
    server.admin("groups", "add", "family", "--name", "Family")
    server.admin("users", "groups", "add", "ada", "family")
    status, _, body = family_get()
    seen = json.loads(body)
    assert status == 200 and seen["Remote-User"] == "ada" and seen["Remote-Groups"] == "family"
    server.admin("users", "groups", "remove", "ada", "family")
    status, _, _ = family_get()
    assert status == 403

    # The rule's 403 page comes through Caddy to the browser, signed in.
    browser.get(f"{team}/private/report")
    wait(browser, lambda d: "have access to team.localhost" in d.find_element("tag name", "body").text,
         what="the no-access page")
    assert "signed in as ada" in browser.find_element("tag name", "body").text
    # Styled from Sesame's origin, though shown on the app's host (docs/integrations.md shows it).
    wait(browser, lambda d: d.execute_script("return getComputedStyle(document.querySelector('.card')).paddingTop")
         == "24px", what="Sesame's styles on the app's host")
    screenshot(browser, "forward-denied", 1280)

    # keys: the password session is sent to a passkey sign-in, and the passkey gets in.
    without_autofill(browser)
    browser.get(f"{keys}/vault")
    wait(browser, lambda d: d.current_url.startswith(server.origin + "/signin?") and "passkey=required" in d.current_url,
         what="the passkey sign-in page")
    wait(browser, lambda d: find(d, "passkey-button").is_displayed(), what="the sign-in form")
    restore(browser, saved)
    find(browser, "passkey-button").click()
    wait(browser, lambda d: d.current_url == f"{keys}/vault", what="the keys app")
    seen = body_json(browser)
    assert seen["Remote-User"] == "ada" and "pop" in seen["Remote-Amr"].split(",")
