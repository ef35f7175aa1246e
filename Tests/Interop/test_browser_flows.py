"""The sign-in experience in Chromium, against a real `sesame serve` (issue 5).

Each test starts `$SESAME_BIN serve` on a free loopback port with a temporary SQLite file, drives the server's own
pages (/signup, /signin, /account) in headless Chromium (Debian chromium + chromedriver) with virtual
authenticators, and checks both what the page shows and what the server stored (`sesame users show` on the same
database, or the JSON API with the browser's session cookie).

A spy script injected before every page load (DevTools `Page.addScriptToEvaluateOnNewDocument`, so the pages' CSP
does not apply to it) records calls to `navigator.credentials.get/create` and the Signal API
(`PublicKeyCredential.signal*`) in sessionStorage, then calls the real functions: the tests can see which requests
the page made (conditional, immediate or modal) and which signals it sent.

Chromium facts these tests rely on (checked with Chromium 156): a virtual authenticator answers an AutoFill
(`mediation: "conditional"`) request as soon as it is made, without a field being focused; a modal request that
no virtual authenticator can answer fails with NotAllowedError at once.
"""

import base64
import json
import os
import pathlib
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pyotp
import pytest
import yaml
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import WebDriverWait

from conftest import ROOT, free_port

SCREENSHOTS = ROOT / "docs" / "screenshots"

SPY = r"""
(() => {
  const key = "sesame-test-spy";
  const record = (entry) => {
    try {
      const list = JSON.parse(sessionStorage.getItem(key) || "[]");
      list.push(entry);
      sessionStorage.setItem(key, JSON.stringify(list));
    } catch (e) {}
  };
  const creds = navigator.credentials;
  if (creds) {
    const get = creds.get.bind(creds), create = creds.create.bind(creds);
    creds.get = (options) => {
      const pk = (options && options.publicKey) || {};
      const entry = { fn: "get", mediation: (options && options.mediation) || null,
                      allow: (pk.allowCredentials || []).length, page: location.pathname };
      record({ ...entry, fn: "get:start" });
      return get(options).then((c) => { record({ ...entry, outcome: "ok", id: c && c.id }); return c; },
                                (e) => { record({ ...entry, outcome: e.name }); throw e; });
    };
    creds.create = (options) => {
      const entry = { fn: "create", mediation: (options && options.mediation) || null, page: location.pathname };
      record({ ...entry, fn: "create:start" });
      return create(options).then((c) => { record({ ...entry, outcome: "ok", id: c && c.id }); return c; },
                                   (e) => { record({ ...entry, outcome: e.name }); throw e; });
    };
  }
  document.addEventListener("securitypolicyviolation", (e) => {
    record({ fn: "csp-violation", directive: e.violatedDirective, blocked: e.blockedURI, page: location.pathname });
  });
  if (window.PublicKeyCredential) {
    for (const name of ["signalUnknownCredential", "signalAllAcceptedCredentials", "signalCurrentUserDetails"]) {
      const original = PublicKeyCredential[name];
      if (typeof original !== "function") continue;
      PublicKeyCredential[name] = (payload) => {
        record({ fn: name, payload, page: location.pathname });
        return original.call(PublicKeyCredential, payload);
      };
    }
  }
})();
"""

# A browser without AutoFill-assisted requests: the page must then rely on its buttons.
NO_AUTOFILL = r"""
if (window.PublicKeyCredential) {
  Object.defineProperty(PublicKeyCredential, "isConditionalMediationAvailable", { value: undefined, configurable: true });
}
"""


# A provider list of the project's own (one made-up provider with icons drawn for the tests): the bundled list
# names providers but ships none of their icons.
PROVIDERS = pathlib.Path(__file__).resolve().parent / "browser" / "providers.json"
EXAMPLE_PROVIDER = "5e5a3e00-5e5a-4e00-8000-0000000000f1"


# The engines a browser test that says so runs on (`engine` fixture): PostgreSQL whenever scripts/test gives one.
POSTGRES = os.environ.get("SESAME_TEST_POSTGRES_URL")
ENGINES = ["sqlite"] + (["postgres"] if POSTGRES else [])


@pytest.fixture(params=ENGINES)
def engine(request):
    return request.param


def psql(url, statement):
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", statement], check=True,
                   capture_output=True, text=True, timeout=60)


class Server:
    """`sesame serve` on a free port with its own SQLite file, or with `engine="postgres"` a PostgreSQL database of
    its own (made beside SESAME_TEST_POSTGRES_URL's and dropped by `stop()`); stopped by `stop()`."""

    def __init__(self, sesame_bin: str, directory: pathlib.Path, challenge_timeout=None, extra_args=(),
                 engine="sqlite"):
        self.bin = os.path.abspath(sesame_bin)
        self.port = free_port()
        self.origin = f"http://localhost:{self.port}"
        self.postgres_name = None
        if engine == "postgres":
            from urllib.parse import urlsplit, urlunsplit
            assert POSTGRES, "a PostgreSQL test needs SESAME_TEST_POSTGRES_URL (scripts/test sets it)"
            self.postgres_name = f"sesame_browser_{os.getpid()}_{self.port}"
            psql(POSTGRES, f'CREATE DATABASE "{self.postgres_name}"')
            self.database = urlunsplit(urlsplit(POSTGRES)._replace(path="/" + self.postgres_name))
        else:
            self.database = str(directory / "sesame.sqlite")
        self.log_path = directory / "server.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [self.bin, "serve", "--host", "127.0.0.1", f"--port={self.port}", f"--origin={self.origin}",
             "--rp-id=localhost", f"--database={self.database}", "--password-scrypt-log-n=12",
             "--sms-sender=console", "--log-level=warning", f"--provider-list-file={PROVIDERS}"]
            + ([f"--challenge-timeout={challenge_timeout}"] if challenge_timeout else []) + list(extra_args),
            stdout=self.log, stderr=subprocess.STDOUT, cwd=directory)
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{self.origin}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.process.poll() is not None or time.time() > deadline:
                self.stop()
                pytest.fail(f"sesame serve did not start:\n{self.log_path.read_text()[-2000:]}")
            time.sleep(0.2)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()
        if self.postgres_name:
            psql(POSTGRES, f'DROP DATABASE IF EXISTS "{self.postgres_name}" WITH (FORCE)')
            self.postgres_name = None

    def admin(self, *args) -> str:
        done = subprocess.run([self.bin, *args, f"--database={self.database}"], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def user(self, username: str) -> str:
        return self.admin("users", "show", username)

    def passkey_lines(self, username: str) -> list:
        text = self.user(username)
        section = text.split("passkeys:", 1)[1].split("sessions:", 1)[0]
        return [line.strip() for line in section.splitlines() if line.strip()]

    def sms_messages(self) -> str:
        self.log.flush()
        return self.log_path.read_text()


@pytest.fixture
def server(sesame_bin, tmp_path):
    running = Server(sesame_bin, tmp_path)
    yield running
    running.stop()


@pytest.fixture
def engine_server(sesame_bin, tmp_path, engine):
    """`server` on each engine in turn (`engine`)."""
    running = Server(sesame_bin, tmp_path, engine=engine)
    yield running
    running.stop()


@pytest.fixture
def short_server(sesame_bin, tmp_path):
    """A server whose ceremonies last 30 s (its minimum), which is also the WebAuthn timeout it gives browsers."""
    running = Server(sesame_bin, tmp_path, challenge_timeout=30)
    yield running
    running.stop()


@pytest.fixture
def browser(chromium):
    """The session's Chromium, clean for this test: no cookies, no authenticators, the spy installed."""
    driver = chromium
    if getattr(driver, "virtual_authenticator_id", None):
        driver.remove_virtual_authenticator()  # left by an earlier test
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Page.enable", {})
    scripts = [driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPY})["identifier"]]
    driver.set_window_size(1280, 900)
    # Every test starts in English: an earlier test on this browser may have asked for another language.
    agent = driver.execute_script("return navigator.userAgent")
    driver.execute_cdp_cmd("Network.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": "en-US,en"})
    driver.sesame_scripts = scripts
    yield driver
    # No page broke its own Content-Security-Policy during the test.
    try:
        violations = [c for c in spied(driver) if c["fn"] == "csp-violation"]
    except Exception:
        violations = []
    for identifier in driver.sesame_scripts:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": identifier})
    try:
        driver.remove_all_credentials()
    except Exception:
        pass
    try:
        driver.remove_virtual_authenticator()
    except Exception:
        pass
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.get("about:blank")
    assert violations == [], f"CSP violations: {violations}"


def without_autofill(driver):
    driver.sesame_scripts.append(
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NO_AUTOFILL})["identifier"])


def authenticator(driver, protocol=Protocol.CTAP2, transport=Transport.INTERNAL, resident=True, uv=True,
                  consenting=True) -> str:
    """Adds a virtual authenticator (replacing the previous one) and returns its id."""
    try:
        driver.remove_virtual_authenticator()
    except Exception:
        pass
    options = VirtualAuthenticatorOptions(
        protocol=protocol, transport=transport, has_resident_key=resident, has_user_verification=uv,
        is_user_consenting=consenting, is_user_verified=uv)
    driver.add_virtual_authenticator(options)
    return driver.virtual_authenticator_id


def credential_id_of(credential) -> str:
    """A virtual authenticator credential's ID as unpadded base64url (selenium gives it padded, URL-safe)."""
    return credential.id.rstrip("=")


def wait(driver, condition, timeout=30, what="condition"):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(lambda d: condition(d))
    except TimeoutException:
        pytest.fail(f"timed out waiting for {what}; page {driver.current_url}, message: {message(driver)!r}")


def find(driver, element_id):
    return driver.find_element(By.ID, element_id)


def message(driver) -> str:
    try:
        return driver.find_element(By.ID, "message").text
    except Exception:
        return ""


def open_page(driver, server, path):
    driver.get(server.origin + path)
    wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", what=f"{path} to load")


def spied(driver) -> list:
    return json.loads(driver.execute_script("return sessionStorage.getItem('sesame-test-spy') || '[]'"))


def signed_in(driver, server):
    wait(driver, lambda d: d.current_url.startswith(server.origin + "/account")
         and d.execute_script("return document.body.dataset.ready === 'true'"), what="the account page")


def api(driver, method, path, body=None):
    """Calls the API from the page (session cookie, CSRF token from GET /api/account) and returns (status, json)."""
    return driver.execute_async_script("""
      const [method, path, body, done] = arguments;
      (async () => {
        const account = await fetch('/api/account', {credentials: 'same-origin'});
        const csrf = account.ok ? (await account.json()).csrfToken : '';
        const headers = {'X-CSRF-Token': csrf};
        if (body !== null) headers['Content-Type'] = 'application/json';
        const answer = await fetch(path, {method, headers, credentials: 'same-origin',
                                          body: body === null ? undefined : JSON.stringify(body)});
        let data = null;
        try { data = await answer.json(); } catch (e) {}
        done([answer.status, data]);
      })().catch((e) => done([0, String(e)]));
    """, method, path, body)


def type_into(driver, element_id, text):
    field = find(driver, element_id)
    field.clear()
    field.send_keys(text)


def sign_up(driver, server, username, display_name, password=None):
    open_page(driver, server, "/signup")
    type_into(driver, "username", username)
    type_into(driver, "display-name", display_name)
    if password:
        find(driver, "want-password").click()
        type_into(driver, "new-password", password)
    find(driver, "signup-button").click()
    signed_in(driver, server)


def sign_out(driver, server) -> list:
    """Signs out from the account page. The virtual authenticator is detached first (a Chromium virtual
    authenticator answers the sign-in page's AutoFill request at once); its credentials are returned so the test
    can attach them again with `restore`."""
    saved = []
    if getattr(driver, "virtual_authenticator_id", None):
        saved = driver.get_credentials()
        driver.remove_virtual_authenticator()
    find(driver, "sign-out").click()
    wait(driver, lambda d: d.current_url.startswith(server.origin + "/signin"), what="the sign-in page")
    wait(driver, lambda d: find(d, "username").is_displayed(), what="the sign-in form")
    return saved


def restore(driver, saved, **options):
    """A new virtual authenticator holding `saved` credentials."""
    authenticator(driver, **options)
    for credential in saved:
        driver.add_credential(credential)


def screenshot(driver, name, width):
    """Full-page PNG at `width` CSS pixels into docs/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    mobile = width < 600
    height = driver.execute_script("return Math.max(document.body.scrollHeight, 600)")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": int(height), "deviceScaleFactor": 1, "mobile": mobile})
    height = driver.execute_script("return Math.max(document.documentElement.scrollHeight, 600)")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": int(height), "deviceScaleFactor": 1, "mobile": mobile})
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    (SCREENSHOTS / f"{name}-{width}.png").write_bytes(base64.b64decode(shot["data"]))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    # No horizontal scrolling at this width.
    return width


# 1. Sign up with a passkey -----------------------------------------------------------------------------------

def test_sign_up_with_passkey(browser, server):
    authenticator(browser)
    sign_up(browser, server, "ada", "Ada Lovelace")
    assert "Signed in as Ada Lovelace (ada)" in find(browser, "who").text
    items = browser.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")
    assert len(items) == 1
    stored = server.passkey_lines("ada")
    assert len(stored) == 1
    credentials = browser.get_credentials()
    assert len(credentials) == 1 and credentials[0].is_resident_credential
    # The passkey the server stored is the one the authenticator holds (IDs as unpadded base64url).
    credential_id = credential_id_of(credentials[0])
    assert stored[0].startswith(credential_id)
    assert items[0].get_attribute("data-id") == credential_id
    assert "display name: Ada Lovelace" in server.user("ada")
    created = [c for c in spied(browser) if c["fn"] == "create"]
    assert created and created[0]["outcome"] == "ok" and created[0]["mediation"] is None


# 2. AutoFill sign-in -------------------------------------------------------------------------------------------

def test_autofill_sign_in(browser, server):
    authenticator(browser)
    sign_up(browser, server, "grace", "Grace Hopper")
    saved = sign_out(browser, server)
    assert find(browser, "username").get_attribute("autocomplete") == "username webauthn"
    browser.execute_script("sessionStorage.clear()")
    # Chromium's virtual authenticator answers the AutoFill request as soon as the page makes it (a person would
    # focus the field and pick the passkey from the suggestions); the field is focused if the page is still there.
    restore(browser, saved)
    browser.get(server.origin + "/signin")
    try:
        find(browser, "username").click()
    except Exception:
        pass  # already signed in and on the account page
    signed_in(browser, server)
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["page"] == "/signin"]
    assert any(c["mediation"] == "conditional" and c["outcome"] == "ok" for c in gets), gets
    assert not any(c["mediation"] is None for c in gets), "no modal request was needed"
    assert "Grace Hopper" in find(browser, "who").text
    sessions = api(browser, "GET", "/api/account/sessions")[1]
    current = [s for s in sessions if s["current"]]
    assert current and current[0]["method"].startswith("passkey")
    assert "last used never" not in server.passkey_lines("grace")[0]


# 3. Modal sign-in with no username ----------------------------------------------------------------------------

def test_modal_sign_in_without_username(browser, server):
    authenticator(browser)
    sign_up(browser, server, "katherine", "Katherine Johnson")
    saved = sign_out(browser, server)
    without_autofill(browser)
    restore(browser, saved)
    open_page(browser, server, "/signin")
    find(browser, "passkey-button").click()
    signed_in(browser, server)
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["page"] == "/signin"]
    modal = [c for c in gets if c["mediation"] is None]
    assert modal and modal[-1]["outcome"] == "ok" and modal[-1]["allow"] == 0, gets
    assert "Katherine Johnson" in find(browser, "who").text


# 4. Username-first sign-in with a security key (no resident key) --------------------------------------------

@pytest.mark.parametrize("protocol", [Protocol.CTAP2, Protocol.U2F], ids=["ctap2-usb", "u2f"])
def test_username_first_with_security_key(browser, server, protocol):
    """A security key that keeps no resident credential (ctap2 usb without rk, or u2f) is added with "Add a
    security key" (residentKey "discouraged"), then signs in username-first: the modal request lists the account's
    credentials and the key answers for its own."""
    uv = protocol == Protocol.CTAP2
    authenticator(browser)
    sign_up(browser, server, "hedy", "Hedy Lamarr")
    # Add a security key that keeps no resident credential, then drop the passkey authenticator.
    authenticator(browser, protocol=protocol, transport=Transport.USB, resident=False, uv=uv)
    find(browser, "add-security-key").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")) == 2,
         what="the security key in the list")
    # The page lists the key, reloads the account and signals the accepted credentials before it says so.
    wait(browser, lambda d: "Security key added" in message(d), what="the security key's confirmation")
    key = browser.get_credentials()
    assert len(key) == 1 and not key[0].is_resident_credential
    key_id = credential_id_of(key[0])
    created = [c for c in spied(browser) if c["fn"] == "create" and c["page"] == "/account"]
    assert created and created[-1]["outcome"] == "ok" and created[-1]["id"] == key_id, created
    # What the server stored for the key: a USB credential that cannot be synced, not yet used.
    status, listed = api(browser, "GET", "/api/account/passkeys")
    assert status == 200
    stored = [p for p in listed if p["id"] == key_id]
    assert stored and stored[0]["transports"] == ["usb"], listed
    assert stored[0]["backupEligible"] is False and stored[0]["backedUp"] is False
    assert stored[0].get("lastUsedAt") is None
    item = browser.find_element(By.CSS_SELECTOR, f'#passkey-list li.passkey[data-id="{key_id}"]')
    assert "This device only" in item.text
    line = [entry for entry in server.passkey_lines("hedy") if entry.startswith(key_id)]
    assert line and "last used never" in line[0] and "transports=usb" in line[0]
    # The ctap2 key verified its user (PIN); a u2f key cannot. The server asks for attestation "none", so Chromium
    # hands over a "none" statement for both (for u2f it converts the U2F registration first).
    assert f"uv={'yes' if uv else 'no'}" in line[0] and "format=none" in line[0], line

    # Sign out with the key still attached (the internal authenticator with the passkey is already gone: adding
    # the key replaced it). The key holds no resident credential, so it cannot answer a request with an empty
    # allow list. (Chromium's virtual u2f authenticator reports its credentials with no rpId, since it keeps them
    # by RP ID hash, and WebDriver's AddCredential refuses them; so the key is not detached and restored the way
    # `sign_out` does.)
    find(browser, "sign-out").click()
    wait(browser, lambda d: d.current_url.startswith(server.origin + "/signin"), what="the sign-in page")
    without_autofill(browser)
    open_page(browser, server, "/signin")
    assert [c.id for c in browser.get_credentials()] == [key[0].id]
    type_into(browser, "username", "hedy")
    find(browser, "continue-button").click()
    signed_in(browser, server)
    assert "Hedy Lamarr" in find(browser, "who").text
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["page"] == "/signin" and c["mediation"] is None]
    assert gets and gets[-1]["allow"] == 2 and gets[-1]["outcome"] == "ok", gets
    assert gets[-1]["id"] == key_id
    line = [entry for entry in server.passkey_lines("hedy") if entry.startswith(key_id)]
    assert line and "last used never" not in line[0]
    sessions = api(browser, "GET", "/api/account/sessions")[1]
    assert [s for s in sessions if s["current"]][0]["method"].startswith("passkey")
    status, listed = api(browser, "GET", "/api/account/passkeys")
    assert [p for p in listed if p["id"] == key_id][0].get("lastUsedAt")


def test_username_first_with_usb_security_key_holding_a_resident_credential(browser, server):
    """Username-first with a ctap2 usb key added as a passkey (it keeps a resident credential): the modal request
    carries the account's credential IDs and the key answers for its own."""
    authenticator(browser)
    sign_up(browser, server, "lise", "Lise Meitner")
    authenticator(browser, transport=Transport.USB, uv=True)
    find(browser, "add-passkey").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")) == 2,
         what="the security key in the list")
    key = browser.get_credentials()
    assert len(key) == 1
    key_id = credential_id_of(key[0])
    sign_out(browser, server)
    without_autofill(browser)
    restore(browser, key, transport=Transport.USB, uv=True)
    open_page(browser, server, "/signin")
    type_into(browser, "username", "LISE")  # usernames match in any case
    find(browser, "continue-button").click()
    signed_in(browser, server)
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["page"] == "/signin" and c["mediation"] is None]
    assert gets and gets[-1]["allow"] == 2 and gets[-1]["outcome"] == "ok" and gets[-1]["id"] == key_id, gets
    line = [entry for entry in server.passkey_lines("lise") if entry.startswith(key_id)]
    assert line and "last used never" not in line[0]


def test_username_first_for_an_unknown_user_looks_the_same(browser, short_server):
    """An unknown username gets a modal request with an allow list too (the API's stable fake list of 1 to 3
    descriptors), so the page behaves exactly as for a real account whose passkey is not on this device. The list
    depends on the server secret: when it names a security key (`usb`, `nfc`), Chromium waits for one to be
    plugged in until the request's timeout (30 s on this server), as it would for a real account's key."""
    server = short_server
    authenticator(browser)
    without_autofill(browser)
    open_page(browser, server, "/signin")
    type_into(browser, "username", "nobody-here")
    find(browser, "continue-button").click()
    wait(browser, lambda d: "cancelled or timed out" in message(d), timeout=60, what="the failure message")
    gets = [c for c in spied(browser) if c["fn"] == "get" and c["mediation"] is None]
    assert gets and 1 <= gets[-1]["allow"] <= 3 and gets[-1]["outcome"] == "NotAllowedError", gets
    assert find(browser, "continue-button").is_enabled()


# 5. Silent request with no passkey falls back to the form -----------------------------------------------------

def test_silent_request_falls_back_to_form(browser, server):
    authenticator(browser)  # no credentials on it
    open_page(browser, server, "/signin")
    capabilities = browser.execute_async_script(
        "PublicKeyCredential.getClientCapabilities().then(arguments[0])")
    if not capabilities.get("immediateGet"):
        pytest.skip("this Chromium does not report immediateGet")
    wait(browser, lambda d: find(d, "username").is_displayed() and not find(d, "checking").is_displayed(),
         what="the form to come back")
    gets = [c for c in spied(browser) if c["fn"] == "get"]
    assert gets and gets[0]["mediation"] == "immediate" and gets[0]["outcome"] != "ok", gets
    assert not any(c["mediation"] is None for c in gets), "no modal prompt may be shown"
    assert browser.switch_to.active_element == find(browser, "username")
    # The form works: a password sign-in attempt reaches the server and its answer is shown.
    find(browser, "other-ways").click()
    type_into(browser, "password-username", "nobody")
    type_into(browser, "password", "not the password")
    find(browser, "password-button").click()
    wait(browser, lambda d: "don’t match" in message(d), what="the wrong-password message")


# 6. Password + TOTP, then the passkey upgrade ------------------------------------------------------------------

def set_up_totp(driver):
    """Sets up TOTP from the account page; returns (the page's otpauth URI, pyotp TOTP)."""
    find(driver, "totp-start").click()
    wait(driver, lambda d: find(d, "totp-setup").is_displayed() and find(d, "totp-uri").get_attribute("textContent"),
         what="the TOTP setup")
    uri = find(driver, "totp-uri").get_attribute("textContent")
    secret = find(driver, "totp-secret").text.replace(" ", "")
    totp = pyotp.parse_uri(uri)
    assert totp.secret == secret
    return uri, totp


def confirm_totp(driver, totp):
    type_into(driver, "totp-code", totp.now())
    find(driver, "totp-confirm-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: "Verification codes are on" in message(d), what="TOTP confirmation")


def set_password(driver, password):
    type_into(driver, "new-password", password)
    find(driver, "password-submit").click()
    wait(driver, lambda d: "Password set" in message(d), what="the password to be set")


def password_sign_in(driver, server, username, password):
    open_page(driver, server, "/signin")
    wait(driver, lambda d: find(d, "username").is_displayed(), what="the sign-in form")
    find(driver, "other-ways").click()
    type_into(driver, "password-username", username)
    type_into(driver, "password", password)
    find(driver, "password-button").click()


def test_password_and_totp_then_passkey_upgrade(browser, server):
    authenticator(browser)
    sign_up(browser, server, "margaret", "Margaret Hamilton", password="correct horse battery")
    assert "password:     yes" in server.user("margaret")
    _, totp = set_up_totp(browser)
    confirm_totp(browser, totp)
    assert "totp" in server.user("margaret").split("second factors:", 1)[1].splitlines()[0]
    # Remove the passkey (the password is another way in), so the account is password + TOTP only.
    passkey_id = browser.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").get_attribute("data-id")
    status, _ = api(browser, "DELETE", f"/api/account/passkeys/{passkey_id}")
    assert status == 200
    sign_out(browser, server)
    without_autofill(browser)
    authenticator(browser)  # this device: no passkey for the account yet

    password_sign_in(browser, server, "margaret", "correct horse battery")
    wait(browser, lambda d: find(d, "second-step-form").is_displayed(), what="the second step")
    assert find(browser, "code").get_attribute("autocomplete") == "one-time-code"
    assert browser.switch_to.active_element == find(browser, "code")
    # A wrong code first: the step stays open with a message.
    type_into(browser, "code", "000000" if totp.now() != "000000" else "111111")
    find(browser, "code-button").click()
    wait(browser, lambda d: "code isn’t right" in message(d), what="the wrong-code message")
    # pyotp's code for the next step (the confirmation used the current one, and steps are accepted once).
    type_into(browser, "code", totp.at(time.time() + 30))
    find(browser, "code-button").click()
    signed_in(browser, server)

    # The upgrade: conditional create where the browser has it, otherwise the one-time offer.
    capabilities = browser.execute_async_script("PublicKeyCredential.getClientCapabilities().then(arguments[0])")
    if capabilities.get("conditionalCreate"):
        creates = lambda: [c for c in spied(browser) if c["fn"] == "create" and c["page"] == "/account"]
        wait(browser, lambda d: creates(), what="the conditional create")
        first = creates()[0]
        assert first["mediation"] == "conditional"
        if first["outcome"] == "ok":
            wait(browser, lambda d: "passkey for this account was saved" in message(d), what="the upgrade message")
        else:
            # The browser declined to create one without asking: the page asks once instead.
            wait(browser, lambda d: find(d, "upgrade").is_displayed(), what="the passkey offer")
            find(browser, "upgrade-create").click()
            wait(browser, lambda d: "Passkey created" in message(d), what="the offered passkey")
    else:
        wait(browser, lambda d: find(d, "upgrade").is_displayed(), what="the passkey offer")
        find(browser, "upgrade-create").click()
        wait(browser, lambda d: "Passkey created" in message(d), what="the offered passkey")
    assert len(server.passkey_lines("margaret")) == 1
    assert len(browser.get_credentials()) == 1


def test_passkey_offer_not_now_is_remembered(browser, server):
    authenticator(browser)
    sign_up(browser, server, "radia", "Radia Perlman", password="spanning tree protocol")
    passkey_id = browser.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").get_attribute("data-id")
    assert api(browser, "DELETE", f"/api/account/passkeys/{passkey_id}")[0] == 200
    sign_out(browser, server)
    # A browser without conditional create gets the offer.
    browser.sesame_scripts.append(browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
      const caps = PublicKeyCredential.getClientCapabilities.bind(PublicKeyCredential);
      PublicKeyCredential.getClientCapabilities = () => caps().then((c) => ({...c, conditionalCreate: false}));
    """})["identifier"])
    without_autofill(browser)
    password_sign_in(browser, server, "radia", "spanning tree protocol")
    signed_in(browser, server)
    wait(browser, lambda d: find(d, "upgrade").is_displayed(), what="the passkey offer")
    find(browser, "upgrade-later").click()
    assert not find(browser, "upgrade").is_displayed()
    open_page(browser, server, "/account")
    signed_in(browser, server)
    time.sleep(1)
    assert not find(browser, "upgrade").is_displayed(), "“not now” is remembered"
    assert server.passkey_lines("radia") == []


# 7. Recovery code sign-in --------------------------------------------------------------------------------------

def test_recovery_code_sign_in(browser, server):
    authenticator(browser)
    sign_up(browser, server, "barbara", "Barbara Liskov", password="substitution principle")
    _, totp = set_up_totp(browser)
    confirm_totp(browser, totp)
    find(browser, "recovery-generate").click()
    wait(browser, lambda d: find(d, "recovery-codes").is_displayed(), what="the recovery codes")
    codes = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#recovery-list code")]
    assert len(codes) >= 8 and len(set(codes)) == len(codes)
    before = api(browser, "GET", "/api/account")[1]["recoveryCodesRemaining"]
    assert before == len(codes)
    sign_out(browser, server)
    without_autofill(browser)

    password_sign_in(browser, server, "barbara", "substitution principle")
    wait(browser, lambda d: find(d, "second-step-form").is_displayed(), what="the second step")
    find(browser, "factor-recovery").click()
    assert find(browser, "code-label").text == "Recovery code"
    type_into(browser, "code", codes[3])
    find(browser, "code-button").click()
    signed_in(browser, server)
    account = api(browser, "GET", "/api/account")[1]
    assert account["recoveryCodesRemaining"] == before - 1
    assert account["session"]["method"] == "password+recovery"
    # The sessions card names the method in words (its script makes the catalog key from the method).
    wait(browser, lambda d: "a password and a recovery code" in find(d, "session-list").text,
         what="the session's method in words")
    # The same code does not work twice.
    sign_out(browser, server)
    password_sign_in(browser, server, "barbara", "substitution principle")
    wait(browser, lambda d: find(d, "second-step-form").is_displayed(), what="the second step")
    find(browser, "factor-recovery").click()
    type_into(browser, "code", codes[3])
    find(browser, "code-button").click()
    wait(browser, lambda d: "code isn’t right" in message(d), what="the used-code message")
    assert find(browser, "code").is_enabled()


def last_sms_code(server, phone):
    """The code in the newest SMS the console sender printed for `phone`, from its origin-bound last line."""
    deadline = time.time() + 15
    while time.time() < deadline:
        messages = server.sms_messages().split(f"SMS to {phone}:")
        if len(messages) > 1:
            match = re.search(r"^@localhost #([0-9]+)$", messages[-1], re.M)
            if match:
                return match.group(1)
        time.sleep(0.2)
    pytest.fail(f"no SMS for {phone} in the server log")


def test_sms_code_sign_in(browser, server):
    phone = "+15551234567"
    authenticator(browser)
    sign_up(browser, server, "sophie", "Sophie Wilson", password="acorn risc machine")
    type_into(browser, "sms-phone", phone)
    find(browser, "sms-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda d: find(d, "sms-confirm-form").is_displayed(), what="the SMS confirm step")
    type_into(browser, "sms-code", last_sms_code(server, phone))
    find(browser, "sms-confirm-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda d: "number is confirmed" in message(d), what="the confirmed number")
    assert "sms" in server.user("sophie").split("second factors:", 1)[1].splitlines()[0]
    sign_out(browser, server)
    without_autofill(browser)

    password_sign_in(browser, server, "sophie", "acorn risc machine")
    wait(browser, lambda d: find(d, "second-step-form").is_displayed(), what="the second step")
    assert find(browser, "factor-sms").is_selected()
    before = server.sms_messages().count(f"SMS to {phone}:")
    find(browser, "send-sms-button").click()
    wait(browser, lambda d: "sent a code" in message(d), what="the sent message")
    assert server.sms_messages().count(f"SMS to {phone}:") == before + 1
    type_into(browser, "code", last_sms_code(server, phone))
    find(browser, "code-button").click()
    signed_in(browser, server)
    assert api(browser, "GET", "/api/account")[1]["session"]["method"] == "password+sms"
    wait(browser, lambda d: "a password and a text message code" in find(d, "session-list").text,
         what="the session's method in words")


# 8. Add, rename and delete a passkey, with the Signal API ------------------------------------------------------

def set_aaguid(server, credential_id, aaguid):
    """Stores `aaguid` for a credential directly in the server's SQLite file (Chromium's virtual authenticators
    report AAGUIDs no provider list names)."""
    import sqlite3
    with sqlite3.connect(server.database, timeout=10) as db:
        changed = db.execute("UPDATE credentials SET aaguid = ? WHERE id = ?", (
            bytes.fromhex(aaguid.replace("-", "")),
            base64.urlsafe_b64decode(credential_id + "=" * (-len(credential_id) % 4)))).rowcount
    db.close()
    assert changed == 1, credential_id


def test_add_rename_delete_passkey_with_signals(browser, server):
    authenticator(browser)
    sign_up(browser, server, "frances", "Frances Allen")
    user_handle = api(browser, "GET", "/api/account")[1]["user"]["userHandle"]
    browser.execute_script("sessionStorage.removeItem('sesame-test-spy')")

    def accepted_signals():
        return [c["payload"] for c in spied(browser) if c["fn"] == "signalAllAcceptedCredentials"]

    # Add (the same authenticator can hold a second credential for another user handle only, so use a second one).
    authenticator(browser, transport=Transport.USB)
    find(browser, "add-passkey").click()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")) == 2,
         what="the new passkey in the list")
    wait(browser, lambda d: accepted_signals(), what="signalAllAcceptedCredentials after adding")
    ids = [li.get_attribute("data-id") for li in browser.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")]
    payload = accepted_signals()[-1]
    assert payload["rpId"] == "localhost" and payload["userId"] == user_handle
    assert sorted(payload["allAcceptedCredentialIds"]) == sorted(ids)
    assert len(server.passkey_lines("frances")) == 2

    # Provider icons. Chromium's virtual authenticators report AAGUID 01020304-0506-0708-0102-030405060708 or
    # none (all zero), which no provider list names, so the list has no provider or icon for them and the page
    # shows the generic icon.
    listed = api(browser, "GET", "/api/account/passkeys")[1]
    assert all(p.get("aaguid") in (None, "01020304-0506-0708-0102-030405060708") for p in listed), listed
    assert all("providerIcon" not in p and "provider" not in p for p in listed), listed
    icons = browser.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey img.provider-icon")
    assert [i.get_attribute("src") for i in icons] == [server.origin + "/static/passkey.svg"] * 2
    # Give the first passkey the AAGUID of a listed provider (the test list's example) in the database, as if it came
    # from that provider: the page shows the provider's icon, served by this origin and allowed by img-src 'self'.
    set_aaguid(server, ids[0], EXAMPLE_PROVIDER)
    open_page(browser, server, "/account")
    signed_in(browser, server)
    item = browser.find_element(By.CSS_SELECTOR, f'#passkey-list li.passkey[data-id="{ids[0]}"]')
    assert "Example Passkeys" in item.find_element(By.CSS_SELECTOR, ".provider").text
    icon = item.find_element(By.CSS_SELECTOR, "img.provider-icon")
    assert icon.get_attribute("src") == f"{server.origin}/providers/{EXAMPLE_PROVIDER}/icon" and icon.get_attribute("alt") == ""
    wait(browser, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", icon),
         what="the provider icon to load")
    with urllib.request.urlopen(f"{server.origin}/providers/{EXAMPLE_PROVIDER}/icon?theme=dark") as answer:
        assert answer.headers["Content-Type"] == "image/svg+xml"
        assert "sandbox" in answer.headers["Content-Security-Policy"]
        assert answer.read().lstrip().startswith((b"<svg", b"<?xml"))

    # Rename the new one.
    new_id = credential_id_of(browser.get_credentials()[0])
    item = browser.find_element(By.CSS_SELECTOR, f'#passkey-list li[data-id="{new_id}"]')
    item.find_element(By.CSS_SELECTOR, "button.rename").click()
    field = browser.find_element(By.ID, f"rename-{new_id}")
    assert browser.switch_to.active_element == field
    field.clear()
    field.send_keys("Blue security key")
    field.submit()
    wait(browser, lambda d: "Renamed the passkey" in message(d), what="the rename")
    assert "Blue security key" in browser.find_element(By.CSS_SELECTOR, f'li[data-id="{new_id}"] .name').text
    assert any("Blue security key" in line for line in server.passkey_lines("frances"))
    assert len(accepted_signals()) >= 2

    # Delete it.
    item = browser.find_element(By.CSS_SELECTOR, f'#passkey-list li[data-id="{new_id}"]')
    item.find_element(By.CSS_SELECTOR, "button.delete").click()
    browser.find_element(By.CSS_SELECTOR, f'#passkey-list li[data-id="{new_id}"] button.confirm-delete').click()
    wait(browser, lambda d: "Deleted" in message(d), what="the delete")
    wait(browser, lambda d: new_id not in accepted_signals()[-1]["allAcceptedCredentialIds"]
         and len(accepted_signals()[-1]["allAcceptedCredentialIds"]) == 1, what="the signal after deleting")
    assert len(server.passkey_lines("frances")) == 1
    assert not any(line.startswith(new_id) for line in server.passkey_lines("frances"))

    # The last passkey of a passkey-only account cannot be deleted: the page says why.
    last = browser.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey")
    last.find_element(By.CSS_SELECTOR, "button.delete").click()
    last.find_element(By.CSS_SELECTOR, "button.confirm-delete").click()
    wait(browser, lambda d: "last way to sign in" in message(d), what="the last-way-in message")
    assert len(server.passkey_lines("frances")) == 1


@pytest.fixture
def quick_reauth_server(sesame_bin, tmp_path):
    """A server that allows sensitive changes for only 30 s (its minimum) after signing in."""
    running = Server(sesame_bin, tmp_path, extra_args=["--reauthentication-window=30"])
    yield running
    running.stop()


def test_sensitive_change_after_the_window_asks_for_the_passkey_again(browser, quick_reauth_server):
    server = quick_reauth_server
    authenticator(browser)
    sign_up(browser, server, "katherine", "Katherine Johnson")
    time.sleep(31)  # past the re-authentication window
    # Without the page's help the API refuses the change.
    status, answer = api(browser, "POST", "/api/account/recovery-codes", {})
    assert status == 403 and answer["error"] == "reauthentication_required"
    # The page asks the passkey again (the virtual authenticator answers) and then makes the change.
    find(browser, "recovery-generate").click()
    wait(browser, lambda d: find(d, "recovery-codes").is_displayed(), what="the recovery codes after re-authenticating")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#recovery-list code")) >= 8
    assert api(browser, "GET", "/api/account")[1]["recoveryCodesRemaining"] >= 8


def test_unknown_credential_is_signalled(browser, server):
    authenticator(browser)
    sign_up(browser, server, "annie", "Annie Easley")
    # The server forgets the passkey (deleted by an administrator with the account), the device still has it.
    credential_id = credential_id_of(browser.get_credentials()[0])
    saved = sign_out(browser, server)
    server.admin("users", "delete", "annie", "--yes")
    without_autofill(browser)
    restore(browser, saved)
    open_page(browser, server, "/signin")
    find(browser, "passkey-button").click()
    wait(browser, lambda d: any(c["fn"] == "signalUnknownCredential" for c in spied(d)),
         what="signalUnknownCredential")
    payload = [c for c in spied(browser) if c["fn"] == "signalUnknownCredential"][-1]["payload"]
    assert payload == {"rpId": "localhost", "credentialId": credential_id}
    # The page says so once the browser's signal call has returned.
    wait(browser, lambda d: "isn’t registered" in message(d), what="the unknown passkey's message")
    assert find(browser, "username").is_enabled()


def test_account_page_signals_current_user_details(browser, server):
    authenticator(browser)
    sign_up(browser, server, "mary", "Mary Jackson")
    wait(browser, lambda d: any(c["fn"] == "signalCurrentUserDetails" for c in spied(d)),
         what="signalCurrentUserDetails")
    details = [c["payload"] for c in spied(browser) if c["fn"] == "signalCurrentUserDetails"]
    user_handle = api(browser, "GET", "/api/account")[1]["user"]["userHandle"]
    assert details[-1] == {"rpId": "localhost", "userId": user_handle, "name": "mary", "displayName": "Mary Jackson"}
    # Once per browser session: reloading the page does not send it again.
    open_page(browser, server, "/account")
    signed_in(browser, server)
    time.sleep(0.5)
    assert len([c for c in spied(browser) if c["fn"] == "signalCurrentUserDetails"]) == 1


def test_display_name_change_signals_current_user_details(browser, server):
    """Changing the name on the account page: the page and the server show the new name, and the page sends
    signalCurrentUserDetails with it (after the one sent when the page first opened)."""
    authenticator(browser)
    sign_up(browser, server, "dorothy", "Dorothy Vaughan")
    wait(browser, lambda d: any(c["fn"] == "signalCurrentUserDetails" for c in spied(d)),
         what="the first signalCurrentUserDetails")
    assert find(browser, "display-name").get_attribute("value") == "Dorothy Vaughan"
    # A name the server refuses (a control character) is explained and changes nothing.
    browser.execute_script("document.getElementById('display-name').value = 'Dorothy\u0007'")
    find(browser, "display-name-save").click()
    wait(browser, lambda d: "1 to 64 characters" in message(d), what="the refusal")
    assert "display name: Dorothy Vaughan" in server.user("dorothy")
    type_into(browser, "display-name", "  Dorothy J. Vaughan ")
    find(browser, "display-name-save").click()
    wait(browser, lambda d: "Your name is now “Dorothy J. Vaughan”" in message(d), what="the change")
    assert "Signed in as Dorothy J. Vaughan (dorothy)" in find(browser, "who").text
    assert "display name: Dorothy J. Vaughan" in server.user("dorothy")
    assert api(browser, "GET", "/api/account")[1]["user"]["displayName"] == "Dorothy J. Vaughan"
    wait(browser, lambda d: len([c for c in spied(d) if c["fn"] == "signalCurrentUserDetails"]) == 2,
         what="signalCurrentUserDetails after the change")
    details = [c["payload"] for c in spied(browser) if c["fn"] == "signalCurrentUserDetails"]
    user_handle = api(browser, "GET", "/api/account")[1]["user"]["userHandle"]
    assert details[-1] == {"rpId": "localhost", "userId": user_handle, "name": "dorothy",
                           "displayName": "Dorothy J. Vaughan"}
    # The new name was signalled already: reloading does not send it again.
    open_page(browser, server, "/account")
    signed_in(browser, server)
    time.sleep(0.5)
    assert len([c for c in spied(browser) if c["fn"] == "signalCurrentUserDetails"]) == 2


# 9. A cancelled prompt leaves a usable form ---------------------------------------------------------------------

@pytest.mark.parametrize("how", ["no-presence", "no-authenticator"])
def test_cancelled_prompt_leaves_usable_form(browser, short_server, how):
    """`no-presence`: the authenticator holds the passkey but the person never confirms (Chromium keeps the request
    open until its timeout, 30 s here, then rejects it); `no-authenticator`: nothing attached can answer (Chromium
    rejects at once, as when the person closes the sheet)."""
    server = short_server
    authenticator(browser)
    sign_up(browser, server, "joan", "Joan Clarke")
    saved = sign_out(browser, server)
    if how == "no-presence":
        restore(browser, saved, consenting=False)
    else:
        authenticator(browser, transport=Transport.USB)  # holds nothing for this site
    without_autofill(browser)
    open_page(browser, server, "/signin")
    find(browser, "passkey-button").click()
    wait(browser, lambda d: "cancelled or timed out" in message(d), timeout=60, what="the cancellation message")
    assert find(browser, "message").get_attribute("role") == "alert"
    assert find(browser, "passkey-button").is_enabled()
    field = find(browser, "username")
    assert field.is_displayed() and field.is_enabled()
    assert browser.switch_to.active_element == field
    type_into(browser, "username", "joan")
    if how == "no-authenticator":
        find(browser, "continue-button").click()
        # With an allow list and a USB authenticator attached, Chromium sometimes rejects at once and sometimes
        # waits for another security key until the request's timeout (30 s here): the attempt ends either way.
        try:
            WebDriverWait(browser, 60, poll_frequency=0.1).until(
                lambda d: len([c for c in spied(d) if c["fn"] == "get" and c["mediation"] is None]) == 2)
        except TimeoutException:
            requests = browser.execute_script(
                "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/'))"
                ".map((e) => [e.name, Math.round(e.duration), e.responseStatus])")
            pytest.fail(f"the second attempt did not end within 60 s; message {message(browser)!r}; spied "
                        f"{spied(browser)}; API requests {requests}; server log {server.log_path.read_text()[-2000:]!r}")
        assert "cancelled or timed out" in message(browser)
    assert browser.current_url.startswith(server.origin + "/signin")
    # Signed out before, and the failed attempts made no session.
    assert server.user("joan").split("sessions:", 1)[1].strip() == ""


def test_cancelled_sign_up_keeps_the_form(browser, short_server):
    server = short_server
    authenticator(browser, consenting=False)
    open_page(browser, server, "/signup")
    type_into(browser, "username", "alan")
    type_into(browser, "display-name", "Alan Turing")
    find(browser, "signup-button").click()
    wait(browser, lambda d: "wasn’t created" in message(d), timeout=60, what="the cancellation message")
    assert find(browser, "username").get_attribute("value") == "alan"
    assert find(browser, "signup-button").is_enabled()
    assert "no account" not in server.admin("users", "list") and "alan" not in server.admin("users", "list")


# 10. TOTP setup: the QR image decodes to the URI the page shows --------------------------------------------------

def test_totp_qr_decodes_to_shown_uri(browser, server, tmp_path):
    authenticator(browser)
    sign_up(browser, server, "hamming", "Richard Hamming")
    uri, totp = set_up_totp(browser)
    assert uri.startswith("otpauth://totp/")
    qr = find(browser, "totp-qr")
    wait(browser, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", qr),
         what="the QR image")
    # The exact bytes the page displays: fetched from the image's own URL with the page's cookie.
    png = browser.execute_async_script("""
      const [img, done] = arguments;
      fetch(img.src, {credentials: 'same-origin'}).then(r => r.arrayBuffer()).then(b => {
        let s = ''; for (const x of new Uint8Array(b)) s += String.fromCharCode(x); done(btoa(s));
      });
    """, qr)
    path = tmp_path / "qr.png"
    path.write_bytes(base64.b64decode(png))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    decoded = subprocess.run(["zbarimg", "--quiet", "--raw", str(path)], capture_output=True, text=True, timeout=30)
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout.strip() == uri
    apple = find(browser, "totp-apple").get_attribute("href")
    assert apple.startswith("apple-otpauth://")
    assert f"secret={totp.secret}" in apple
    confirm_totp(browser, totp)
    assert not find(browser, "totp-setup").is_displayed()


# Screenshots -----------------------------------------------------------------------------------------------------

def sideways_overflow(driver, width) -> int:
    """How many CSS pixels the page is wider than a `width`-pixel viewport."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600})
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return overflow


def test_screenshots(browser, server):
    """Sign-in, sign-up and account pages at desktop and phone widths, without horizontal scrolling."""
    authenticator(browser)
    without_autofill(browser)
    for page in ("signin", "signup"):
        open_page(browser, server, f"/{page}")
        wait(browser, lambda d: find(d, "username").is_displayed(), what=f"{page} form")
        for width in (1280, 390):
            screenshot(browser, page, width)
            assert sideways_overflow(browser, width) <= 0, f"{page} scrolls sideways at {width}px"
    sign_up(browser, server, "dorothy", "Dorothy Vaughan")
    # Chromium's virtual authenticator reports an AAGUID no provider list names; give the passkey the test list's
    # example provider (as flow 8 does) so the picture shows a named provider with its icon.
    passkey_id = browser.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").get_attribute("data-id")
    set_aaguid(server, passkey_id, EXAMPLE_PROVIDER)
    open_page(browser, server, "/account")
    wait(browser, lambda d: "Example Passkeys" in d.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").text,
         what="the provider name")
    icon = browser.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey img.provider-icon")
    wait(browser, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", icon),
         what="the provider icon to load")
    for width in (1280, 390):
        screenshot(browser, "account", width)
        assert sideways_overflow(browser, width) <= 0, f"account scrolls sideways at {width}px"
    for name in ("signin", "signup", "account"):
        for width in (1280, 390):
            assert (SCREENSHOTS / f"{name}-{width}.png").stat().st_size > 1000


# Pages: headers, no inline script, labels ------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/signin", "/signup"])
def test_pages_have_strict_csp_and_labelled_fields(browser, server, path):
    with urllib.request.urlopen(server.origin + path, timeout=10) as answer:
        csp = answer.headers["Content-Security-Policy"]
        html = answer.read().decode()
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    # The page's messages are a JSON data block (never run); every script is a file.
    assert not re.search(r"<script(?![^>]*\b(src=|type=\"application/json\"))", html), "no inline script"
    assert html.count('<script type="application/json"') == 1
    assert not re.search(r"\son[a-z]+=", html), "no inline event handlers"
    assert " style=" not in html
    open_page(browser, server, path)
    fields = browser.find_elements(By.CSS_SELECTOR, "input:not([type=hidden]):not([hidden])")
    for field in fields:
        field_id = field.get_attribute("id")
        assert browser.find_elements(By.CSS_SELECTOR, f'label[for="{field_id}"]'), f"{field_id} has a label"
    # The policy is enforced: script URLs need Trusted Types (none are allowed), and an image from elsewhere is
    # blocked and reported.
    with pytest.raises(Exception, match="TrustedScriptURL"):
        browser.execute_script("document.createElement('script').src = '/static/ui.js'")
    browser.execute_script("const i = document.createElement('img'); i.src = 'https://example.invalid/x.png'; "
                           "document.body.append(i)")
    wait(browser, lambda d: any(c["fn"] == "csp-violation" and c["directive"] == "img-src" for c in spied(d)),
         what="the CSP report")
    browser.execute_script("sessionStorage.removeItem('sesame-test-spy')")


def test_sign_in_by_keyboard_alone(browser, server):
    """Tab order follows the page, and the passkey button works from the keyboard."""
    authenticator(browser)
    sign_up(browser, server, "tim", "Tim Berners-Lee")
    saved = sign_out(browser, server)
    without_autofill(browser)
    restore(browser, saved)
    open_page(browser, server, "/signin")
    wait(browser, lambda d: d.switch_to.active_element.get_attribute("id") == "username",
         what="the focus in the username field")

    def step(backwards=False):
        chain = ActionChains(browser)
        if backwards:
            chain = chain.key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT)
        else:
            chain = chain.send_keys(Keys.TAB)
        chain.perform()
        active = browser.switch_to.active_element
        return active.get_attribute("id") or active.get_attribute("class")

    backwards = [step(backwards=True) for _ in range(2)]
    assert backwards == ["brand", "skip"], backwards
    forwards = [step() for _ in range(4)]
    assert forwards == ["brand", "username", "continue-button", "passkey-button"], forwards
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    signed_in(browser, server)


def api_error_codes(server) -> set:
    """Every error code the server answers with: the `ErrorCode` enum of the OpenAPI document it serves, which
    VocabularyTests ties to the server's `APIErrorCode`."""
    with urllib.request.urlopen(server.origin + "/openapi.yaml", timeout=10) as response:
        document = yaml.safe_load(response.read())
    return set(document["components"]["schemas"]["ErrorCode"]["enum"])


def test_every_api_error_code_has_a_sentence(browser, server):
    codes = sorted(api_error_codes(server))
    assert "unknown_credential" in codes and "invalid_credentials" in codes and len(codes) > 20
    open_page(browser, server, "/signin")
    answers = browser.execute_async_script("""
      const [codes, done] = arguments;
      import('/static/api.js').then((m) => done(codes.map((c) => [c, m.humanMessage(c, 'SERVER TEXT', 600)])));
    """, codes)
    generic = "Something went wrong. Please try again."
    for code, sentence in answers:
        assert sentence not in ("SERVER TEXT", generic), f"{code} has no sentence of its own"
        assert not sentence.startswith("error."), f"{code} has no sentence in the page's catalog"
    assert dict(answers)["too_many_attempts"] == "Too many tries. For your security, wait 10 minutes and try again."
    # invalid_password names the limits the answer carries, else none.
    limits = browser.execute_async_script("""
      const done = arguments[0];
      import('/static/api.js').then((m) => done(m.humanMessage('invalid_password', 'SERVER TEXT', undefined,
        { minimum: '8', maximum: '64' })));
    """)
    assert limits == "Choose a password of 8 to 64 characters."
    # The same sentences in the language the page is in.
    open_page(browser, server, "/signin?ui_locales=ko")
    korean = browser.execute_async_script("""
      const done = arguments[0];
      import('/static/api.js').then((m) => done([m.humanMessage('too_many_attempts', '', 600),
        m.humanMessage('invalid_credentials', 'SERVER TEXT', undefined)]));
    """)
    assert korean == ["시도 횟수가 너무 많습니다. 보안을 위해 10분 후에 다시 시도해 주세요.",
                      "사용자 이름과 비밀번호가 일치하지 않습니다. 확인 후 다시 시도해 주세요."]


def test_sign_in_page_in_arabic_runs_right_to_left(browser, server):
    """The sign-in page asked for in Arabic (`ui_locales`): lang and dir on the page, the heading and the page
    script's sentences in Arabic, the username field left to right."""
    open_page(browser, server, "/signin?ui_locales=ar")
    html = browser.find_element(By.TAG_NAME, "html")
    assert html.get_attribute("lang") == "ar" and html.get_attribute("dir") == "rtl"
    assert find(browser, "signin-heading").text.startswith("تسجيل الدخول إلى")
    username = find(browser, "username")
    assert browser.execute_script("return getComputedStyle(arguments[0]).direction", username) == "ltr"
    # A script's sentence: submitting the empty form.
    wait(browser, lambda d: find(d, "username-form").is_displayed(), what="the username form")
    find(browser, "continue-button").click()
    wait(browser, lambda d: "أدخل اسم المستخدم" in message(d), what="the Arabic message")


def test_account_page_needs_a_session(server):
    request = urllib.request.Request(server.origin + "/account")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as raised:
        opener.open(request, timeout=10)
    assert raised.value.code == 303 and raised.value.headers["Location"] == "/signin"
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(server.origin + "/static/..%2Fopenapi.yaml", timeout=10)
    assert missing.value.code == 404
