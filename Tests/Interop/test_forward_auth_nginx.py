"""Forward auth behind a real nginx (Debian's, with `auth_request`), against a real `sesame serve` (issue 16).

Layout, all on loopback:
- `sesame serve` at http://localhost:S (origin and RP ID `localhost`), `--forward-auth-domains=app.localhost`;
- nginx at http://app.localhost:N (Chromium resolves `*.localhost` to loopback by itself), with `auth_request` to
  Sesame's `/forward-auth?mode=status`, `error_page 401 =302` to the `Location` Sesame answers with, and
  `/_sesame/callback` forwarded to Sesame's `/forward-auth/callback` (the app is on another domain than Sesame's
  host-only cookie reaches, so the one-time code exchange runs);
- a small upstream (Python `http.server`) that echoes the `Remote-User` header nginx passes it.

The same nginx server also answers for `vault.localhost`, which only a passkey sign-in may enter
(`--forward-auth-passkey-domains`), and for `evil.localhost`, which Sesame was not told about. Access rules
(`--forward-auth-rules`) shut `app.localhost/private` for everyone and let every signed-in person in elsewhere.
"""

import json
import pathlib
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import free_port, start_header_echo
from test_browser_flows import (  # noqa: F401  (fixtures used by name)
    Server, authenticator, browser, find, message, password_sign_in, restore, sign_out, sign_up, signed_in, wait,
    without_autofill)

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name app.localhost vault.localhost evil.localhost;

        # The check: every request below asks Sesame first (headers only, no body).
        location = /_sesame/auth {{
            internal;
            proxy_pass http://127.0.0.1:{sesame}/forward-auth?mode=status;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_set_header X-Forwarded-Uri $request_uri;
        }}

        # The code exchange's callback on the app's own host.
        location = /_sesame/callback {{
            proxy_pass http://127.0.0.1:{sesame}/forward-auth/callback;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $http_host;
        }}

        location / {{
            auth_request /_sesame/auth;
            auth_request_set $sesame_user $upstream_http_remote_user;
            auth_request_set $sesame_amr $upstream_http_remote_amr;
            auth_request_set $sesame_groups $upstream_http_remote_groups;
            auth_request_set $sesame_email $upstream_http_remote_email;
            auth_request_set $sesame_signin $upstream_http_location;
            error_page 401 =302 $sesame_signin;
            proxy_set_header Remote-User $sesame_user;
            proxy_set_header Remote-Amr $sesame_amr;
            proxy_set_header Remote-Groups $sesame_groups;
            proxy_set_header Remote-Email $sesame_email;
            proxy_pass http://127.0.0.1:{upstream};
        }}
    }}
}}
"""


@pytest.fixture
def proxied(sesame_bin, tmp_path):
    """Sesame, the upstream and nginx; yields (server, app origin, nginx port)."""
    if not shutil.which("nginx"):
        pytest.fail("nginx (Debian package) is required; scripts/test installs it")
    upstream = start_header_echo(["Remote-User", "Remote-Amr", "Remote-Groups", "Remote-Email"],
                                 key=lambda name: name.lower().replace("-", "_"))
    port = free_port()
    rules = json.dumps([{"host": "app.localhost", "path": "/private", "policy": "nobody"},
                        {"host": "app.localhost", "path": "/admin", "policy": "groups", "groups": ["admins"]},
                        {"host": "app.localhost", "policy": "signed-in"},
                        {"host": "vault.localhost", "policy": "signed-in"}])
    sesame = Server(sesame_bin, tmp_path, extra_args=["--forward-auth-domains=app.localhost,vault.localhost",
                                                      "--forward-auth-passkey-domains=vault.localhost",
                                                      f"--forward-auth-rules={rules}"])
    nginx_dir = tmp_path / "nginx"
    nginx_dir.mkdir()
    conf = nginx_dir / "nginx.conf"
    conf.write_text(NGINX_CONF.format(dir=nginx_dir, port=port, sesame=sesame.port,
                                      upstream=upstream.server_address[1]))
    nginx = subprocess.Popen(["nginx", "-p", str(nginx_dir), "-c", str(conf)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_ready", timeout=2)
            except urllib.error.HTTPError:
                break  # nginx answers (Sesame's refusal of the bare address, here)
            except (urllib.error.URLError, ConnectionError, OSError):
                if nginx.poll() is not None or time.time() > deadline:
                    log = (nginx_dir / "error.log").read_text() if (nginx_dir / "error.log").exists() else ""
                    pytest.fail(f"nginx did not start:\n{log[-2000:]}")
                time.sleep(0.1)
            else:
                break
        yield sesame, f"http://app.localhost:{port}", port
    finally:
        nginx.terminate()
        nginx.wait(timeout=20)
        sesame.stop()
        upstream.shutdown()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def raw_get(port, host, path, headers=None):
    """GET through nginx with this Host header, redirects not followed: (status, headers, body)."""
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Host": host, **(headers or {})})
    try:
        with opener.open(request, timeout=10) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_nginx_auth_request_signs_in_with_a_passkey_and_refuses_foreign_domains(browser, proxied):
    server, app, port = proxied
    host = f"app.localhost:{port}"

    # Signed out, nginx sends the person on (never to the upstream), whatever Remote-User they claim.
    status, headers, _ = raw_get(port, host, "/hello?x=1", {"Remote-User": "mallory"})
    assert status == 302
    assert headers["Location"] == f"{app}/_sesame/callback?rd=" + urllib.parse.quote(f"{app}/hello?x=1", safe="")

    # A passkey account, signed out again.
    authenticator(browser)
    sign_up(browser, server, "ada", "Ada Lovelace")
    saved = sign_out(browser, server)
    without_autofill(browser)

    # The app sends the browser to Sesame's sign-in page, which will come back to it.
    browser.get(f"{app}/hello?x=1")
    wait(browser, lambda d: d.current_url.startswith(server.origin + "/signin?return="), what="Sesame's sign-in page")
    wait(browser, lambda d: find(d, "passkey-button").is_displayed(), what="the sign-in form")
    restore(browser, saved)
    find(browser, "passkey-button").click()

    # Back at the app, by way of the one-time code, with the code gone from the address.
    wait(browser, lambda d: d.current_url == f"{app}/hello?x=1", what="the app")
    seen = json.loads(browser.find_element("tag name", "body").text)
    assert seen["remote_user"] == "ada"
    assert seen["path"] == "/hello?x=1"
    assert "pop" in seen["remote_amr"].split(",")
    cookies = {c["name"]: c for c in browser.get_cookies()}
    assert "sesame_forward" in cookies and cookies["sesame_forward"]["httpOnly"]
    assert "domain" not in cookies["sesame_forward"] or cookies["sesame_forward"]["domain"] == "app.localhost"

    # The cookie works through nginx, and identity headers the client sends are replaced by nginx's (an empty
    # value from Sesame removes the client's).
    forward = f"sesame_forward={cookies['sesame_forward']['value']}"
    status, _, body = raw_get(port, host, "/again", {"Cookie": forward, "Remote-User": "mallory",
                                                     "Remote-Groups": "admins", "Remote-Email": "root@example.com"})
    seen = json.loads(body)
    assert status == 200 and seen["remote_user"] == "ada"
    assert seen["remote_groups"] is None and seen["remote_email"] is None
    # The rules: the shut path is 403 for ada too (nginx's own page), and nothing reaches the upstream.
    status, headers, body = raw_get(port, host, "/private/x", {"Cookie": forward})
    assert status == 403 and "Location" not in headers and b"remote_user" not in body
    # /admin: members of `admins` only; the group in Remote-Groups once the operator puts ada in it.
    status, _, body = raw_get(port, host, "/admin/users", {"Cookie": forward, "Remote-Groups": "admins"})
    assert status == 403 and b"remote_user" not in body
    server.admin("groups", "add", "admins")
    server.admin("users", "groups", "add", "ada", "admins")
    status, _, body = raw_get(port, host, "/admin/users", {"Cookie": forward})
    seen = json.loads(body)
    assert status == 200 and seen["remote_user"] == "ada" and seen["remote_groups"] == "admins"
    # An encoded slash could reach the upstream as /private/x: refused, not read as one segment.
    status, _, body = raw_get(port, host, "/private%2Fx", {"Cookie": forward})
    assert status == 403 and b"remote_user" not in body
    # The same cookie at a host Sesame does not answer for: refused, not redirected.
    status, headers, _ = raw_get(port, f"evil.localhost:{port}", "/", {"Cookie": forward})
    assert status == 403 and "Location" not in headers

    # A foreign domain in the browser: nginx's 403 page, no trip to Sesame.
    browser.get(f"http://evil.localhost:{port}/")
    assert browser.current_url.startswith(f"http://evil.localhost:{port}/")
    assert "403" in browser.title + browser.find_element("tag name", "body").text

    # Sesame's return endpoint refuses a foreign return address, signed in or not, without redirecting.
    rd = urllib.parse.quote(f"http://evil.localhost:{port}/", safe="")
    browser.get(f"{server.origin}/forward-auth/return?rd={rd}")
    assert browser.current_url.startswith(server.origin + "/forward-auth/return")
    assert "host_not_allowed" in browser.find_element("tag name", "body").text

    # The sign-in page's return link only ever names Sesame's own endpoints: a foreign one ends at the account page.
    browser.get(f"{server.origin}/signin?return=" + urllib.parse.quote(f"http://evil.localhost:{port}/", safe=""))
    target = browser.execute_async_script("""
      const done = arguments[arguments.length - 1];
      import('/static/signin.js').then((m) => done([m.returnTarget(location.search),
        m.returnTarget('?return=' + encodeURIComponent('//evil.localhost/')),
        m.returnTarget('?return=' + encodeURIComponent('/forward-auth/return?rd=x'))]));
    """)
    assert target == ["/account", "/account", "/forward-auth/return?rd=x"]


def test_a_passkey_only_host_sends_a_password_session_to_a_passkey_sign_in(browser, proxied):
    server, app, port = proxied
    vault = f"http://vault.localhost:{port}"
    authenticator(browser)
    sign_up(browser, server, "grace", "Grace Hopper", password="correct horse battery staple")
    saved = sign_out(browser, server)
    password_sign_in(browser, server, "grace", "correct horse battery staple")
    signed_in(browser, server)

    # The password session is enough for the ordinary app …
    browser.get(f"{app}/")
    wait(browser, lambda d: d.current_url == f"{app}/", what="the app")
    seen = json.loads(browser.find_element("tag name", "body").text)
    assert seen["remote_user"] == "grace" and seen["remote_amr"] == "pwd"

    # … but the vault sends it to a sign-in page that asks for a passkey and offers nothing else.
    without_autofill(browser)
    browser.get(f"{vault}/secret")
    wait(browser, lambda d: d.current_url.startswith(server.origin + "/signin?")
         and "passkey=required" in d.current_url, what="the passkey sign-in page")
    wait(browser, lambda d: "asks you to sign in with a passkey" in message(d), what="the passkey request")
    assert not find(browser, "other-ways").is_displayed()
    restore(browser, saved)
    find(browser, "passkey-button").click()
    wait(browser, lambda d: d.current_url == f"{vault}/secret", what="the vault")
    seen = json.loads(browser.find_element("tag name", "body").text)
    assert seen["remote_user"] == "grace"
    assert "pop" in seen["remote_amr"].split(",")
