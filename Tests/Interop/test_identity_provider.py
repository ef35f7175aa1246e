"""Sesame as an OpenID Connect provider, used by a relying-party library no one here wrote (issue 16).

The relying party is authlib (its requests `OAuth2Session` for the code flow with PKCE, its JOSE and OIDC claim
classes to validate ID tokens against the JWKS). The person uses Chromium on Sesame's own pages, signs in with a
passkey by AutoFill, consents, and comes back to a loopback callback this test listens on; the same listener takes
back-channel logout tokens. The server is a real `sesame serve` with its own SQLite file; the application is
registered with `sesame clients add`.
"""

import http.server
import secrets
import subprocess
import threading
import time
import urllib.parse

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken
from selenium.webdriver.common.by import By

from conftest import free_port
from test_browser_flows import (  # noqa: F401 (browser is a fixture)
    Server, api, authenticator, browser, find, open_page, restore, screenshot, sign_out, sign_up, signed_in,
    spied, wait,
)


class Listener:
    """The application's side on loopback: records callback URLs and back-channel logout tokens."""

    def __init__(self):
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.callbacks, self.logout_tokens = [], []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                listener.callbacks.append(listener.origin + self.path)
                self._answer(200, b"<!doctype html><title>App</title><p id=app>back at the app</p>")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                if self.path == "/backchannel":
                    form = urllib.parse.parse_qs(body)
                    listener.logout_tokens.extend(form.get("logout_token", []))
                self._answer(200, b"")

            def _answer(self, status, body):
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def wait_for_logout_tokens(self, count, timeout=10):
        deadline = time.time() + timeout
        while len(self.logout_tokens) < count and time.time() < deadline:
            time.sleep(0.1)
        return list(self.logout_tokens)

    def stop(self):
        self.httpd.shutdown()


@pytest.fixture
def app():
    listener = Listener()
    yield listener
    listener.stop()


@pytest.fixture
def idp(sesame_bin, tmp_path):
    running = Server(sesame_bin, tmp_path)
    yield running
    running.stop()


def register(server, app, *extra):
    out = server.admin(
        "clients", "add", "--name", "Wiki", "--redirect-uri", app.origin + "/callback",
        "--post-logout-redirect-uri", app.origin + "/signed-out", "--backchannel-logout-uri", app.origin + "/backchannel",
        *extra)
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return fields["client_id"], fields.get("client_secret", "").split("  ")[0]


def discovery(server):
    document = requests.get(server.origin + "/.well-known/openid-configuration", timeout=10).json()
    assert document["issuer"] == server.origin
    return document


def validated(server, document, id_token, client_id, nonce):
    """authlib's own validation: signature against the JWKS, iss, aud, exp, iat, nonce."""
    keys = JsonWebKey.import_key_set(requests.get(document["jwks_uri"], timeout=10).json())
    claims = jwt.decode(
        id_token, keys, claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": server.origin}},
        claims_params={"nonce": nonce, "client_id": client_id})
    claims.validate(leeway=5)
    return claims


def relying_party(client_id, secret, app, scope="openid profile offline_access"):
    return OAuth2Session(
        client_id, secret, scope=scope, redirect_uri=app.origin + "/callback",
        code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")


def authorization(session, document, **extra):
    nonce, verifier = secrets.token_urlsafe(16), secrets.token_urlsafe(48)
    uri, state = session.create_authorization_url(
        document["authorization_endpoint"], nonce=nonce, code_verifier=verifier, **extra)
    return uri, state, nonce, verifier


def test_authlib_code_flow_with_a_passkey_by_autofill(browser, idp, app):
    document = discovery(idp)
    assert "groups" in document["scopes_supported"] and "groups" in document["claims_supported"]
    # Only members of `family` may use the app; the groups' custom claims ride along under the groups scope.
    idp.admin("groups", "add", "family", "--claims", '{"roles": ["reader"]}')
    client_id, secret = register(idp, app, "--id-token-claims", "--allowed-groups", "family")
    authenticator(browser)
    sign_up(browser, idp, "ada", "Ada Lovelace")
    idp.admin("users", "groups", "add", "ada", "family")
    saved = sign_out(browser, idp)

    # The application sends the person to Sesame; the sign-in page's AutoFill request is answered by the passkey.
    rp = relying_party(client_id, secret, app, scope="openid profile groups offline_access")
    uri, state, nonce, verifier = authorization(rp, document)
    restore(browser, saved)
    browser.get(uri)
    wait(browser, lambda d: d.current_url.startswith(idp.origin + "/oauth/authorize")
         or d.current_url.startswith(app.origin), what="the consent page")
    wait(browser, lambda d: d.find_elements(By.ID, "consent-allow"), what="the consent form")
    assert "Wiki" in find(browser, "consent-heading").text
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["page"] == "/signin"]
    assert any(c["mediation"] == "conditional" and c["outcome"] == "ok" for c in gets), gets
    find(browser, "consent-allow").click()
    wait(browser, lambda d: d.current_url.startswith(app.origin + "/callback"), what="the app's callback")

    token = rp.fetch_token(document["token_endpoint"], authorization_response=browser.current_url,
                           code_verifier=verifier, state=state)
    claims = validated(idp, document, token["id_token"], client_id, nonce)
    assert claims["acr"] == "phr" and "pop" in claims["amr"]
    # The passkey's BE flag says which: a device-bound key (hwk) or a synced one (swk), never both.
    assert ("hwk" in claims["amr"]) != ("swk" in claims["amr"]), claims["amr"]
    assert claims["preferred_username"] == "ada" and claims["name"] == "Ada Lovelace"
    assert claims["groups"] == ["family"] and claims["roles"] == ["reader"]
    assert claims["sub"] != "ada"
    userinfo = rp.get(document["userinfo_endpoint"]).json()
    assert userinfo["sub"] == claims["sub"] and userinfo["name"] == "Ada Lovelace"
    assert userinfo["groups"] == ["family"] and isinstance(userinfo["updated_at"], int)

    # Refresh rotates; the spent token, used again, ends the whole grant.
    first = token["refresh_token"]
    rotated = rp.refresh_token(document["token_endpoint"], refresh_token=first)
    assert rotated["refresh_token"] != first
    validated(idp, document, rotated["id_token"], client_id, nonce)
    with pytest.raises(OAuthError, match="invalid_grant"):
        rp.refresh_token(document["token_endpoint"], refresh_token=first)
    with pytest.raises(OAuthError, match="invalid_grant"):
        rp.refresh_token(document["token_endpoint"], refresh_token=rotated["refresh_token"])
    introspected = requests.post(document["introspection_endpoint"], data={"token": rotated["access_token"]},
                                 auth=(client_id, secret), timeout=10).json()
    assert introspected == {"active": False}

    # A new authorization is not asked again (consent remembered); the account page lists the app.
    uri, state, nonce, verifier = authorization(rp, document)
    browser.get(uri)
    wait(browser, lambda d: d.current_url.startswith(app.origin + "/callback"), what="the callback without consent")
    token = rp.fetch_token(document["token_endpoint"], authorization_response=browser.current_url,
                           code_verifier=verifier, state=state)
    open_page(browser, idp, "/account#apps")
    signed_in(browser, idp)
    items = browser.find_elements(By.CSS_SELECTOR, "#app-list li")
    assert [item.find_element(By.CSS_SELECTOR, ".title").text for item in items] == ["Wiki"]
    assert "your username and name" in items[0].text
    screenshot(browser, "apps-with-access", 1280)

    # Removing its access: the tokens stop working and the app is told by back-channel logout.
    items[0].find_element(By.TAG_NAME, "button").click()
    wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "#app-list li"), what="the app to be removed")
    assert find(browser, "apps-empty").is_displayed()
    assert requests.get(document["userinfo_endpoint"], headers={"Authorization": f"Bearer {token['access_token']}"},
                        timeout=10).status_code == 401
    logout_tokens = app.wait_for_logout_tokens(1)
    assert len(logout_tokens) == 1
    keys = JsonWebKey.import_key_set(requests.get(document["jwks_uri"], timeout=10).json())
    logout = jwt.decode(logout_tokens[0], keys)
    assert logout["sub"] == claims["sub"] and logout["aud"] == client_id and logout["iss"] == idp.origin
    assert "http://schemas.openid.net/event/backchannel-logout" in logout["events"] and "nonce" not in logout

    # RP-initiated logout with the ID token as hint: back to the registered page with state, signed out.
    uri, state, nonce, verifier = authorization(rp, document)
    browser.get(uri)
    wait(browser, lambda d: d.find_elements(By.ID, "consent-allow"), what="consent asked again")
    find(browser, "consent-allow").click()
    wait(browser, lambda d: d.current_url.startswith(app.origin + "/callback"), what="the callback")
    token = rp.fetch_token(document["token_endpoint"], authorization_response=browser.current_url,
                           code_verifier=verifier, state=state)
    browser.get(document["end_session_endpoint"] + "?" + urllib.parse.urlencode({
        "id_token_hint": token["id_token"], "post_logout_redirect_uri": app.origin + "/signed-out",
        "state": "bye"}))
    wait(browser, lambda d: d.current_url.startswith(app.origin + "/signed-out"), what="the post-logout page")
    assert urllib.parse.parse_qs(urllib.parse.urlparse(browser.current_url).query) == {"state": ["bye"]}
    # The sign-in page's AutoFill request would be answered by the virtual authenticator at once: detach it first.
    browser.remove_virtual_authenticator()
    open_page(browser, idp, "/signin")
    assert api(browser, "GET", "/api/account")[0] == 401
    assert len(app.wait_for_logout_tokens(2)) == 2


def password_session(idp, username, password):
    """A requests session signed in with a password (the cookie a browser would hold)."""
    session = requests.Session()
    answer = session.post(idp.origin + "/api/sessions/password", json={"username": username, "password": password},
                          timeout=10)
    assert answer.status_code == 200, answer.text
    return session


def follow(session, uri):
    """One authorization request with a browser's cookies, redirects not followed: (status, location)."""
    answer = session.get(uri, allow_redirects=False, timeout=10)
    return answer.status_code, answer.headers.get("Location", "")


def test_authlib_rules_with_a_password_session_and_an_rs256_client(idp, app):
    document = discovery(idp)
    client_id, secret = register(idp, app, "--first-party", "--id-token-alg", "RS256")
    done = subprocess.run(
        [idp.bin, "users", "create", "grace", f"--database={idp.database}", "--password-scrypt-log-n=12"],
        input="correct horse battery\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rp = relying_party(client_id, secret, app)

    # prompt=none without a session: login_required comes back to the app, nothing is shown.
    uri, state, nonce, verifier = authorization(rp, document, prompt="none")
    status, location = follow(requests.Session(), uri)
    assert status == 303 and location.startswith(app.origin + "/callback")
    answer = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)
    assert answer["error"] == ["login_required"] and answer["state"] == [state] and answer["iss"] == [idp.origin]

    # prompt=none with a session (first-party: no consent): a code, and an RS256 ID token authlib validates.
    browser_cookies = password_session(idp, "grace", "correct horse battery")
    uri, state, nonce, verifier = authorization(rp, document, prompt="none")
    status, location = follow(browser_cookies, uri)
    assert status == 303 and "code=" in location, location
    token = rp.fetch_token(document["token_endpoint"], authorization_response=location, code_verifier=verifier,
                           state=state)
    header = jwt.decode(token["id_token"], JsonWebKey.import_key_set(
        requests.get(document["jwks_uri"], timeout=10).json())).header
    assert header["alg"] == "RS256" and header["kid"]
    claims = validated(idp, document, token["id_token"], client_id, nonce)
    assert claims["amr"] == ["pwd"] and "acr" not in claims

    # max_age=1, two seconds later: the person must sign in again (prompt=none then says login_required).
    time.sleep(2.1)
    uri, state, nonce, verifier = authorization(rp, document, max_age=1)
    status, location = follow(browser_cookies, uri)
    assert status == 303 and location.startswith("/signin?return="), location
    uri, state, nonce, verifier = authorization(rp, document, max_age=1, prompt="none")
    assert "error=login_required" in follow(browser_cookies, uri)[1]

    # acr_values=phr after a password sign-in: sent to sign in with a passkey, never given a code.
    uri, state, nonce, verifier = authorization(rp, document, acr_values="phr")
    status, location = follow(browser_cookies, uri)
    assert status == 303 and location.startswith("/signin?") and "passkey=required" in location, location

    # Introspection and revocation (RFC 7662, RFC 7009) through the client's credentials.
    live = requests.post(document["introspection_endpoint"], data={"token": token["access_token"]},
                         auth=(client_id, secret), timeout=10).json()
    assert live["active"] is True and live["client_id"] == client_id and live["sub"] == claims["sub"]
    assert requests.post(document["introspection_endpoint"], data={"token": token["access_token"]},
                         auth=(client_id, "wrong"), timeout=10).status_code == 401
    assert requests.post(document["revocation_endpoint"], data={"token": token["refresh_token"]},
                         auth=(client_id, secret), timeout=10).status_code == 200
    gone = requests.post(document["introspection_endpoint"], data={"token": token["access_token"]},
                         auth=(client_id, secret), timeout=10).json()
    assert gone == {"active": False}
    with pytest.raises(OAuthError, match="invalid_grant"):
        rp.refresh_token(document["token_endpoint"], refresh_token=token["refresh_token"])
