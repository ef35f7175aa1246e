"""A second relying party that no one here wrote the verification of: a small Flask app on another origin whose
registration and sign-in are checked by py_webauthn. Its page uses the browser's own JSON helpers
(PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON and credential.toJSON()), so it sees
the extension's credentials exactly as it would see the browser's."""

import json
import pathlib
import secrets
import threading

from flask import Flask, jsonify, request
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, ResidentKeyRequirement,
                                      UserVerificationRequirement)
from werkzeug.serving import make_server

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Second site</title></head>
<body>
<h1>Second site</h1>
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username webauthn">
<button id="register" type="button">Create account</button>
<button id="signin" type="button">Sign in with a passkey</button>
<p id="status"></p>
<script>
const status = (text) => { document.getElementById("status").textContent = text; };
async function post(path, body) {
  const answer = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                    body: JSON.stringify(body || {})});
  const data = await answer.json();
  if (!answer.ok) throw new Error(data.error || "failed");
  return data;
}
document.getElementById("register").addEventListener("click", async () => {
  try {
    const options = await post("/register/options", {username: document.getElementById("username").value});
    const credential = await navigator.credentials.create({
      publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)});
    const done = await post("/register/verify", credential.toJSON());
    status("registered " + done.username);
  } catch (e) { status("error " + (e.name || "") + " " + e.message); }
});
async function finish(credential) {
  const done = await post("/signin/verify", credential.toJSON());
  status("signed in as " + done.username);
}
document.getElementById("signin").addEventListener("click", async () => {
  try {
    if (window.conditional) window.conditional.abort();
    const options = await post("/signin/options");
    const credential = await navigator.credentials.get({
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
    await finish(credential);
  } catch (e) { status("error " + (e.name || "") + " " + e.message); }
});
// AutoFill: a conditional request as soon as the page loads.
(async () => {
  if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
  const options = await post("/signin/options");
  window.conditional = new AbortController();
  try {
    const credential = await navigator.credentials.get({
      mediation: "conditional", signal: window.conditional.signal,
      publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
    await finish(credential);
  } catch (e) { if (e.name !== "AbortError") status("error " + e.name + " " + e.message); }
})();
</script>
</body></html>
"""


# A page of the same site that keeps notes end-to-end encrypted with a key from a passkey's `prf` output (WebAuthn L3
# §10.1.4), as sites that unlock a vault with a passkey do: "Create account" registers with `prf`, "Sign in" asks for
# the outputs and opens the note the server keeps for that user, "Save note" seals the note (AES-256-GCM under a key
# HKDF-SHA-256 derives from the first output) and hands the server only the ciphertext. The salts are `eval`'s
# `first` and `second` from the query (defaults "first", "second"); `?by=ID` makes the sign-in ask for that credential
# only (allowCredentials) with `evalByCredential` for it ("by-first", "by-second") beside `eval`. Each ceremony's
# outputs, base64url, and whether they are ArrayBuffers of the page's own realm, land in the root element's
# data-prf; what happened in #status.
PRF_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Sealed notes</title></head>
<body>
<h1>Sealed notes</h1>
<label for="username">Username</label> <input id="username" autocomplete="username">
<button id="register" type="button">Create account</button>
<button id="signin" type="button">Sign in</button>
<label for="note">Note</label> <textarea id="note"></textarea>
<button id="save" type="button">Save note</button>
<p id="status"></p>
<p id="opened"></p>
<script>
const query = new URLSearchParams(location.search);
const bytes = (text) => new TextEncoder().encode(text);
const encode = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer)))
  .replace(/[+]/g, "-").replace(/[/]/g, "_").replace(/=+$/, "");
const decode = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const status = (text) => { document.getElementById("status").textContent = text; };
const evalSalts = {first: bytes(query.get("first") || "first"), second: bytes(query.get("second") || "second")};
let key = null, user = null;
async function call(method, path, body) {
  const answer = await fetch(path, {method, headers: {"Content-Type": "application/json"},
                                    body: body === undefined ? undefined : JSON.stringify(body)});
  return [answer.status, answer.status === 204 ? null : await answer.json()];
}
async function post(path, body) {
  const [code, data] = await call("POST", path, body || {});
  if (code !== 200) throw new Error(data.error || "failed");
  return data;
}
async function take(ceremony, credential, username) {
  const out = credential.getClientExtensionResults().prf || {};
  const results = out.results;
  key = null;
  user = username;
  if (results && results.first) {
    const material = await crypto.subtle.importKey("raw", results.first, "HKDF", false, ["deriveKey"]);
    key = await crypto.subtle.deriveKey(
      {name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: bytes("sealed notes key")}, material,
      {name: "AES-GCM", length: 256}, false, ["encrypt", "decrypt"]);
  }
  document.documentElement.dataset.prf = JSON.stringify({
    ceremony, id: credential.id, username, enabled: out.enabled,
    buffers: !!results && results.first instanceof ArrayBuffer && results.second instanceof ArrayBuffer,
    first: results ? encode(results.first) : null, second: results && results.second ? encode(results.second) : null,
    json: credential.toJSON().clientExtensionResults.prf});
}
document.getElementById("register").addEventListener("click", async () => {
  try {
    const username = document.getElementById("username").value;
    const options = PublicKeyCredential.parseCreationOptionsFromJSON(await post("/register/options", {username}));
    const credential = await navigator.credentials.create(
      {publicKey: {...options, extensions: {prf: {eval: evalSalts}}}});
    const done = await post("/register/verify", credential.toJSON());
    await take("create", credential, done.username);
    status("registered " + done.username);
  } catch (e) { status("error " + (e.name || "") + " " + e.message); }
});
document.getElementById("signin").addEventListener("click", async () => {
  try {
    const options = PublicKeyCredential.parseRequestOptionsFromJSON(await post("/signin/options"));
    const prf = {eval: evalSalts};
    const by = query.get("by");
    if (by) {
      options.allowCredentials = [{type: "public-key", id: decode(by)}];
      prf.evalByCredential = {[by]: {first: bytes("by-first"), second: bytes("by-second")}};
    }
    const credential = await navigator.credentials.get({publicKey: {...options, extensions: {prf}}});
    const done = await post("/signin/verify", credential.toJSON());
    await take("get", credential, done.username);
    const [code, note] = await call("GET", "/notes/" + encodeURIComponent(done.username));
    if (code !== 200) { status("signed in as " + done.username); return; }
    try {
      const sealed = decode(note.sealed);
      const plain = await crypto.subtle.decrypt({name: "AES-GCM", iv: sealed.slice(0, 12)}, key, sealed.slice(12));
      document.getElementById("opened").textContent = new TextDecoder().decode(plain);
      status("signed in as " + done.username + ", note opened");
    } catch (e) { status("signed in as " + done.username + ", note not opened: " + e.name); }
  } catch (e) { status("error " + (e.name || "") + " " + e.message); }
});
document.getElementById("save").addEventListener("click", async () => {
  try {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const note = bytes(document.getElementById("note").value);
    const sealed = new Uint8Array(await crypto.subtle.encrypt({name: "AES-GCM", iv}, key, note));
    const [code] = await call("PUT", "/notes/" + encodeURIComponent(user),
                              {sealed: encode(new Uint8Array([...iv, ...sealed]))});
    status(code === 204 ? "note saved" : "error saving");
  } catch (e) { status("error " + (e.name || "") + " " + e.message); }
});
</script>
</body></html>
"""


class RelyingPartyApp:
    """The Flask app on http://second.localhost:PORT (Chromium sends *.localhost to loopback and treats it as a
    secure context), RP ID second.localhost, in a thread of the test process."""

    def __init__(self, port: int):
        self.rp_id = "second.localhost"
        self.origin = f"http://{self.rp_id}:{port}"
        self.users = {}        # username -> user id
        self.credentials = {}  # credential id -> {username, public_key, sign_count}
        self.challenges = {}   # "register" -> (challenge, username): one registration at a time
        # Sign-in challenges issued and not yet spent: a page may hold two at once (AutoFill's conditional request
        # started on load beside a button's modal one), as on any real site.
        self.signin_challenges = set()
        self.verified = []     # what py_webauthn verified: ("registration" | "authentication", username, flags)
        self.notes = {}        # username -> the sealed note PRF_PAGE stored (base64url of IV || AES-GCM ciphertext)
        app = Flask("second-site")

        @app.get("/")
        def index():
            return PAGE

        @app.get("/prf")
        def prf_page():
            return PRF_PAGE

        @app.get("/notes/<username>")
        def note(username):
            if username not in self.notes:
                return jsonify(error="no note"), 404
            return jsonify(sealed=self.notes[username])

        @app.put("/notes/<username>")
        def save_note(username):
            self.notes[username] = (request.get_json() or {})["sealed"]
            return "", 204

        @app.post("/register/options")
        def register_options():
            username = (request.get_json() or {}).get("username") or ""
            if not username:
                return jsonify(error="username required"), 400
            user_id = self.users.setdefault(username, secrets.token_bytes(16))
            options = generate_registration_options(
                rp_id=self.rp_id, rp_name="Second site", user_name=username, user_id=user_id,
                user_display_name=username.title(),
                authenticator_selection=AuthenticatorSelectionCriteria(
                    resident_key=ResidentKeyRequirement.REQUIRED,
                    user_verification=UserVerificationRequirement.PREFERRED))
            self.challenges["register"] = (options.challenge, username)
            return app.response_class(options_to_json(options), mimetype="application/json")

        @app.post("/register/verify")
        def register_verify():
            challenge, username = self.challenges.pop("register")
            verified = verify_registration_response(
                credential=request.get_data(as_text=True), expected_challenge=challenge,
                expected_origin=self.origin, expected_rp_id=self.rp_id)
            self.credentials[verified.credential_id] = {
                "username": username, "public_key": verified.credential_public_key,
                "sign_count": verified.sign_count}
            self.verified.append(("registration", username, verified.credential_backed_up))
            return jsonify(username=username)

        @app.post("/signin/options")
        def signin_options():
            options = generate_authentication_options(
                rp_id=self.rp_id, user_verification=UserVerificationRequirement.PREFERRED)
            self.signin_challenges.add(options.challenge)
            return app.response_class(options_to_json(options), mimetype="application/json")

        @app.post("/signin/verify")
        def signin_verify():
            body = json.loads(request.get_data(as_text=True))
            from conftest import b64url_decode
            # The challenge the response signed, spent if this site issued it and it is unspent; otherwise one it
            # never issued, so py_webauthn refuses the response.
            client_data = json.loads(b64url_decode(body["response"]["clientDataJSON"]))
            signed = b64url_decode(client_data.get("challenge", ""))
            challenge = signed if signed in self.signin_challenges else b"never issued"
            self.signin_challenges.discard(signed)
            stored = self.credentials.get(b64url_decode(body["rawId"]))
            if stored is None:
                return jsonify(error="unknown credential"), 400
            verified = verify_authentication_response(
                credential=body, expected_challenge=challenge, expected_rp_id=self.rp_id,
                expected_origin=self.origin, credential_public_key=stored["public_key"],
                credential_current_sign_count=stored["sign_count"])
            stored["sign_count"] = verified.new_sign_count
            self.verified.append(("authentication", stored["username"], verified.credential_backed_up))
            return jsonify(username=stored["username"])

        self.server = make_server("127.0.0.1", port, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def knows(self, credential_id: bytes, username: str, public_key: bytes, sign_count: int = 0):
        """Records a passkey as registered here earlier, elsewhere (e.g. by Bitwarden before an export): its ID, its
        user and its COSE public key, as registration would have stored them."""
        self.users.setdefault(username, secrets.token_bytes(16))
        self.credentials[credential_id] = {"username": username, "public_key": public_key, "sign_count": sign_count}

    def stop(self):
        self.server.shutdown()


def bitwarden_passkeys(path) -> list:
    """The passkeys in a Bitwarden JSON export, read here independently of the keychain: the credential ID's bytes
    (a GUID's 16 bytes in the order written, or base64url after "b64.", as bitwarden/clients' parseCredentialId reads
    them), the RP ID, the user name, and the COSE public key of the PKCS #8 private key (cryptography + fido2)."""
    import base64
    import uuid

    from cryptography.hazmat.primitives.serialization import load_der_private_key
    from fido2 import cbor
    from fido2.cose import ES256

    def b64url(text):
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    found = []
    for item in json.loads(pathlib.Path(path).read_text())["items"]:
        for passkey in ((item.get("login") or {}).get("fido2Credentials") or []):
            raw_id = passkey["credentialId"]
            credential_id = b64url(raw_id[4:]) if raw_id.startswith("b64.") else uuid.UUID(raw_id).bytes
            key = load_der_private_key(b64url(passkey["keyValue"]), password=None)
            found.append({"credential_id": credential_id, "rp_id": passkey["rpId"], "username": passkey["userName"],
                          "public_key": cbor.encode(ES256.from_cryptography_key(key.public_key()))})
    return found


# --- Chromium with the extension and the native host -------------------------------------------------------------

import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import ROOT

EXTENSION = ROOT / "Extensions" / "browser"
HOST_ELEMENT = "sesame-keychain"  # the extension's prompt host element (its content is in a closed shadow root)


class KeychainBrowser:
    """A keychain vault (unlocked), the native host installed for a fresh Chromium profile, and headless Chromium
    started on that profile with the extension loaded. No virtual authenticator is ever added. `idle`: the seconds
    after which a session the toolbar window starts locks (`install-browser --idle`; the host's default otherwise).
    `lang`: Chromium's language (`--lang`), which the extension's words follow (its `_locales`)."""

    def __init__(self, sesame_bin: str, directory: pathlib.Path, vault=None, idle=None, lang=None):
        from test_keychain_cli import Vault
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        if vault is None:
            vault = Vault(sesame_bin, directory / "keychain")
            vault.init(name="browser")
        self.vault = vault
        self.profile = pathlib.Path(tempfile.mkdtemp(prefix="sesame-chromium-"))
        installed = self.vault.ok("install-browser", "--browser", "chromium", "--user-data-dir", str(self.profile),
                                  "--extension-dir", str(EXTENSION), *(["--idle", str(idle)] if idle else []))
        assert "NativeMessagingHosts" in installed
        self.install_output = installed

        os.environ.setdefault("SE_OFFLINE", "true")
        driver_path = shutil.which("chromedriver")
        browser_path = shutil.which("chromium") or shutil.which("chromium-browser")
        if not driver_path or not browser_path:
            pytest.fail("chromium and chromium-driver (Debian packages) are required; scripts/test installs them")
        options = Options()
        options.binary_location = browser_path
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", f"--user-data-dir={self.profile}",
                    f"--load-extension={EXTENSION}",
                    # Chromium 137+ ignores --load-extension unless this switch's kill-switch feature is off.
                    "--disable-features=DisableLoadExtensionCommandLineSwitch", *([f"--lang={lang}"] if lang else [])):
            options.add_argument(arg)
        if lang:
            options.add_experimental_option("prefs", {"intl.accept_languages": lang})
        # The vault directory reaches the host through the launcher install-browser wrote, not the environment.
        self.driver = webdriver.Chrome(service=Service(driver_path), options=options)
        self.driver.set_script_timeout(30)
        self.driver.set_window_size(1280, 900)

    def stop(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def keychain_browser(sesame_bin, tmp_path):
    running = KeychainBrowser(sesame_bin, tmp_path)
    yield running
    running.stop()


@pytest.fixture
def second_site():
    from conftest import free_port
    app = RelyingPartyApp(free_port())
    yield app
    app.stop()


@pytest.fixture
def server(sesame_bin, tmp_path):
    """Sesame's own pages (`sesame serve` on SQLite, test_browser_flows.Server), for either browser."""
    from test_browser_flows import Server
    (tmp_path / "server").mkdir()
    running = Server(sesame_bin, tmp_path / "server")
    yield running
    running.stop()


# --- What both browsers' window tests use ------------------------------------------------------------------------

TOTP_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"


def is_eff_words(phrase: str, count: int) -> bool:
    """Whether a hyphen-joined passphrase is `count` words of the EFF long word list the keychain ships (a few of its
    words hold a hyphen themselves: "t-shirt")."""
    eff = set((ROOT / "Sources" / "Keychain" / "WordLists" / "eff_large_wordlist.txt").read_text().split())

    def split(parts, left):
        if not parts or left == 0:
            return not parts and left == 0
        return any("-".join(parts[:i]) in eff and split(parts[i:], left - 1) for i in range(1, len(parts) + 1))
    return split(phrase.split("-"), count)


def totp_qr_png(sesame_bin, path: pathlib.Path, issuer: str, account: str) -> str:
    """A QR PNG of a new TOTP link made by the project's own encoder (`sesame otp new --qr`) at `path`; its secret."""
    import re
    import subprocess
    shown = subprocess.run([sesame_bin, "otp", "new", "--issuer", issuer, "--account", account, "--qr", str(path)],
                           capture_output=True, text=True, check=True).stdout
    return re.search(r"^Secret:\s+(\S+)$", shown, re.M).group(1)


def png_without_qr(path: pathlib.Path) -> pathlib.Path:
    """A valid 64x64 white PNG: an image, but no QR code in it."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff" * 64 for _ in range(64))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return path


# A sign-up form the window's "Fill and save" types into: a username and a new-password field.
SIGN_UP_FORM = """
  const form = document.createElement("form");
  form.innerHTML = '<input id="new-user" autocomplete="username">' +
                   '<input id="new-secret" type="password" autocomplete="new-password">';
  document.body.appendChild(form);
"""


def ask_to_join(vault, name) -> str:
    """Starts `sesame keychain join` for a new device through the vault's sync folder; the pairing code it shows."""
    import re
    from test_keychain_cli import PASSPHRASE
    shown = vault.ok("join", "--device-name", name, passphrase=PASSPHRASE)
    return re.search(r"^Pairing code: (\S+)$", shown, re.M).group(1)


def two_synced_devices(sesame_bin, tmp_path, first="A", second="B"):
    """Two devices of one keychain, A and B, joined (B approved on A as `second`) and synced through a sync folder;
    B unlocked."""
    from test_keychain_cli import PASSPHRASE, Vault
    sync = tmp_path / "sync"
    a = Vault(sesame_bin, tmp_path / "a", sync=sync)
    a.init(name=first)
    a.ok("sync")
    b = Vault(sesame_bin, tmp_path / "b", sync=sync)
    a.ok("approve", ask_to_join(b, "B"), "--name", second)
    b.ok("join", passphrase=PASSPHRASE)
    b.ok("unlock", passphrase=PASSPHRASE)
    return a, b


def exported_cxf(downloads: pathlib.Path):
    """The CXF file the window's export downloaded into `downloads`, once written whole; False until then."""
    files = [f for f in downloads.iterdir() if f.name.endswith(".cxf.json")]
    try:
        return files and json.loads(files[0].read_text()) and files[0]
    except ValueError:
        return False  # still being written


def axe_core_source() -> str:
    """axe-core's script, the copy axe-selenium-python ships (3.1.1)."""
    import axe_selenium_python
    return (pathlib.Path(axe_selenium_python.__file__).parent / "node_modules" / "axe-core" / "axe.min.js").read_text()


# An asynchronous script (for execute_async_script, its callback the last argument) that runs axe-core on the page and
# answers its violations as [rule id, [[target, failure summary], ...]]. dlitem is left out: this axe-core (3.1.1)
# predates HTML's <div> groups inside <dl>, which the window's item page uses and later axe-core versions accept.
AXE_VIOLATIONS = (
    "const done = arguments[arguments.length - 1];"
    " axe.run(document, {rules: {dlitem: {enabled: false}}}).then("
    "(r) => done(r.violations.map((v) => [v.id, v.nodes.map((n) => [n.target, n.failureSummary])])),"
    " (e) => done([['error', String(e)]]))")


# --- PRF (the keychain's `prf` extension) ---------------------------------------------------------------------------

def prf_secrets(vault, path: pathlib.Path) -> dict:
    """Each passkey's user-verified PRF secret in `vault`, by credential ID (base64url): `hmacCredentials.credWithUV`
    of a CXF export (written to `path`), the only way the secrets leave a vault."""
    from conftest import b64url, b64url_decode
    from test_keychain_cli import PASSPHRASE
    vault.ok("export", "--cxf", path, "--force", passphrase=PASSPHRASE)
    document = json.loads(pathlib.Path(path).read_text())
    passkeys = [c for a in document["accounts"] for i in a["items"] for c in i["credentials"] if c["type"] == "passkey"]
    return {b64url(b64url_decode(c["credentialId"])):
            b64url_decode(c["fido2Extensions"]["hmacCredentials"]["credWithUV"]) for c in passkeys}


def python_fido2_prf(secret: bytes, salt: bytes) -> str:
    """The PRF output (base64url) for `salt` from a credential whose hmac-secret is `secret`, with python-fido2's own
    salt derivation (SHA-256("WebAuthn PRF" || 0x00 || salt), WebAuthn L3 §10.1.4) and HMAC-SHA-256 as CTAP2's
    hmac-secret computes it."""
    import hashlib
    import hmac
    from conftest import b64url
    from fido2.ctap2.extensions import _prf_salt
    return b64url(hmac.new(secret, _prf_salt(salt), hashlib.sha256).digest())


# evalByCredential refused as a browser refuses it, before any prompt: without allowCredentials NotSupportedError, a
# key that is not the ID of an allowed credential SyntaxError. Asynchronous (its callback last), the credential ID
# as its argument; answers the two errors' names.
PRF_REFUSALS = """
  const [id, done] = [arguments[0], arguments[arguments.length - 1]];
  const decode = (t) => Uint8Array.from(atob(t.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const ask = (allow, key) => navigator.credentials.get({publicKey: {
      challenge: new Uint8Array(32), allowCredentials: allow.map((a) => ({type: "public-key", id: decode(a)})),
      extensions: {prf: {evalByCredential: {[key]: {first: new Uint8Array([1])}}}}}})
    .then(() => "resolved", (e) => e.name);
  Promise.all([ask([], id), ask([id], "AQ")]).then(done);
"""

# The extensions getClientCapabilities() reports, as an asynchronous script (its callback last).
EXTENSION_CAPABILITIES = """
  const done = arguments[arguments.length - 1];
  PublicKeyCredential.getClientCapabilities().then((c) => done(Object.fromEntries(
    Object.entries(c).filter(([k]) => k.startsWith("extension:")))));
"""


@pytest.fixture
def devices_synced_through_serve(sesame_bin, tmp_path):
    """Two keychain devices, A and B (each its own directory, as two computers), enrolled with one account of a real
    `sesame serve` (SQLite) and joined (B approved on A), both unlocked; yields (A, B); `sync` on either goes through
    the server."""
    from test_keychain_cli import PASSPHRASE, needs_suffix_list
    from test_keychain_server import Device
    from test_server import Server, new_user, sign_in
    needs_suffix_list()
    (tmp_path / "serve").mkdir()
    running = Server(sesame_bin, tmp_path / "serve", "sqlite")
    try:
        # The account signs in with a password (each device's enrollment wants a fresh sign-in).
        name, password = new_user(running)
        a = Device(sesame_bin, tmp_path / "a", running)
        a.enroll(sign_in(running, name, password)["sessionToken"], "A")
        a.init(name="A")
        a.ok("sync")
        b = Device(sesame_bin, tmp_path / "b", running)
        b.enroll(sign_in(running, name, password)["sessionToken"], "B")
        a.ok("approve", ask_to_join(b, "B"), "--name", "B")
        b.ok("join", passphrase=PASSPHRASE)
        b.ok("unlock", passphrase=PASSPHRASE)
        yield a, b
    finally:
        running.stop()


# The checks written once for both browsers. `page` is each browser's small adapter: goto(url), type(id, text),
# click(id), confirm_prompt(what) (waits until the keychain's prompt accepts input, then Enter), text(id),
# wait(condition, what), script(js, *args), async_script(js, *args) (in the page's own world, its callback last) and
# prompt_shown().

NOTE = "a note only this passkey opens"


def prf_on_the_site(page, button, outcome):
    """Clicks `button` ("register" or "signin") on PRF_PAGE, confirms the keychain's prompt, checks the start of the
    page's status against `outcome`, and answers what the page got (PRF_PAGE's data-prf)."""
    page.click(button)
    page.confirm_prompt(f"the keychain's prompt ({button})")
    page.wait(lambda: page.text("status").startswith(("registered", "signed in", "error")), f"the page's {button}")
    assert page.text("status").startswith(outcome), page.text("status")
    return json.loads(page.script("return document.documentElement.dataset.prf"))


def register_and_seal_a_note(page, site, username):
    """Registers `username` on PRF_PAGE with `prf` and seals NOTE with the key from its outputs; what the page got."""
    page.goto(site.origin + "/prf")
    page.type("username", username)
    made = prf_on_the_site(page, "register", f"registered {username}")
    page.type("note", NOTE)
    page.click("save")
    page.wait(lambda: page.text("status") == "note saved", "the note saved")
    assert NOTE.encode() not in json.dumps(site.notes).encode()
    return made


def prf_on_one_device(page, site, vault, tmp_path):
    """getClientCapabilities says credProps, prf and largeBlob (every other extension false); `eval` at registration
    and sign-in gives ArrayBuffers of the page's own realm equal to python-fido2's computation over the passkey's
    secret, at both ceremonies; the note sealed with the registration's output opens at the next sign-in;
    `evalByCredential` wins over `eval` for the credential it names (python-fido2's values for its salts, so the note
    does not open); a byte the server changed in the sealed note keeps it shut; evalByCredential's refusals come
    before any prompt."""
    from conftest import b64url, b64url_decode
    page.goto(site.origin + "/prf")
    capabilities = page.async_script(EXTENSION_CAPABILITIES)
    assert {k for k, v in capabilities.items() if v} == {"extension:credProps", "extension:prf",
                                                        "extension:largeBlob"}, capabilities
    made = register_and_seal_a_note(page, site, "pia")
    page.goto(site.origin + "/prf")
    got = prf_on_the_site(page, "signin", "signed in as pia, note opened")
    assert page.text("opened") == NOTE
    assert made["enabled"] is True and made["buffers"] is True and got["buffers"] is True, (made, got)
    assert "enabled" not in got["json"] and got["json"]["results"] == {"first": got["first"], "second": got["second"]}
    [secret] = prf_secrets(vault, tmp_path / "export.cxf").values()
    expected = {name: python_fido2_prf(secret, name.encode()) for name in ("first", "second", "by-first", "by-second")}
    assert (made["first"], made["second"]) == (got["first"], got["second"]) == (expected["first"], expected["second"])
    assert got["first"] != got["second"]

    # evalByCredential for this passkey, beside eval: its salts' outputs, so the note's key is another.
    page.goto(site.origin + f"/prf?by={got['id']}")
    by = prf_on_the_site(page, "signin", "signed in as pia, note not opened: OperationError")
    assert (by["first"], by["second"]) == (expected["by-first"], expected["by-second"]), by

    # A server that changes a byte of the sealed note: it does not open.
    sealed = bytearray(b64url_decode(site.notes["pia"]))
    sealed[-1] ^= 1
    site.notes["pia"] = b64url(bytes(sealed))
    page.goto(site.origin + "/prf")
    prf_on_the_site(page, "signin", "signed in as pia, note not opened: OperationError")

    assert page.async_script(PRF_REFUSALS, got["id"]) == ["NotSupportedError", "SyntaxError"]
    assert not page.prompt_shown()
    assert [v[0] for v in site.verified] == ["registration"] + ["authentication"] * 3


def prf_across_two_devices(open_page, a, b, site, tmp_path):
    """A passkey made with `prf` in device A's browser, the note sealed there, a large blob written to it; after both
    devices sync through the server, device B's browser gets the same outputs for the same salts, opens the note and
    reads the blob; a passkey made on B for another user gives other outputs for those salts; each output is
    python-fido2's for its passkey's secret.
    `open_page(vault)` is a context manager: that device's browser as a page adapter."""
    with open_page(a) as page:
        made = register_and_seal_a_note(page, site, "pia")
        page.goto(site.origin + "/")
        assert large_blob_ceremony(page, "get", {"write": "written on A"}, [made["id"]])["written"] is True
    a.ok("sync")
    b.ok("sync")
    with open_page(b) as page:
        page.goto(site.origin + "/prf")
        on_b = prf_on_the_site(page, "signin", "signed in as pia, note opened")
        assert page.text("opened") == NOTE
        page.goto(site.origin + "/")
        assert large_blob_ceremony(page, "get", {"read": True}, [made["id"]])["blob"] == "written on A"
        page.goto(site.origin + "/prf")
        page.type("username", "quinn")
        other = prf_on_the_site(page, "register", "registered quinn")
    assert on_b["id"] == made["id"] and on_b["buffers"] is True, (made, on_b)
    assert (on_b["first"], on_b["second"]) == (made["first"], made["second"])
    assert other["id"] != made["id"] and other["first"] and other["second"], other
    assert {other["first"], other["second"]}.isdisjoint({made["first"], made["second"]})
    found = prf_secrets(b, tmp_path / "b.cxf")
    for credential in (made, other):
        secret = found[credential["id"]]
        assert (credential["first"], credential["second"]) == (python_fido2_prf(secret, b"first"),
                                                               python_fido2_prf(secret, b"second"))
    assert [v[:2] for v in site.verified] == [("registration", "pia"), ("authentication", "pia"),
                                              ("authentication", "pia"), ("authentication", "pia"),
                                              ("registration", "quinn")]


# A largeBlob ceremony on the site's first page, run by a script element of the page itself (so that its ArrayBuffer
# is checked against the page's own realm, in Firefox too): `ceremony(kind, largeBlob, allow)` with `largeBlob`'s
# `write` as text; what the page got lands in the root element's data-blob.
LARGE_BLOB_CEREMONY = """
async (kind, largeBlob, allow) => {
  const post = async (path, body) => (await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                                          body: JSON.stringify(body || {})})).json();
  const decode = (t) => Uint8Array.from(atob(t.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const record = (value) => { document.documentElement.dataset.blob = JSON.stringify(value); };
  if (window.conditional) window.conditional.abort();
  try {
    const ext = {largeBlob: {...largeBlob}};
    if (ext.largeBlob.write !== undefined) ext.largeBlob.write = new TextEncoder().encode(ext.largeBlob.write);
    let credential;
    if (kind === "create") {
      const json = await post("/register/options", {username: "bea"});
      const options = PublicKeyCredential.parseCreationOptionsFromJSON(json);
      credential = await navigator.credentials.create({publicKey: {...options, extensions: ext}});
      await post("/register/verify", credential.toJSON());
    } else {
      const options = PublicKeyCredential.parseRequestOptionsFromJSON(await post("/signin/options"));
      const allowCredentials = allow.map((id) => ({type: "public-key", id: decode(id)}));
      credential = await navigator.credentials.get({publicKey: {...options, allowCredentials, extensions: ext}});
      await post("/signin/verify", credential.toJSON());
    }
    const out = credential.getClientExtensionResults().largeBlob;
    record({id: credential.id, supported: out.supported, written: out.written,
            blobIsBuffer: out.blob instanceof ArrayBuffer, blob: out.blob ? new TextDecoder().decode(out.blob) : null});
  } catch (e) { record({error: e.name}); }
}
"""

# Runs a function's source with JSON arguments as a script element of the page (the page's own realm and world).
IN_PAGE = """
  delete document.documentElement.dataset.blob;
  const script = document.createElement("script");
  script.textContent = "(" + arguments[0] + ")(..." + JSON.stringify(arguments[1]) + ");";
  document.body.appendChild(script);
"""


def large_blob_ceremony(page, kind, large_blob, allow=()):
    """LARGE_BLOB_CEREMONY on the page shown, its prompt confirmed; what the page got."""
    page.script(IN_PAGE, LARGE_BLOB_CEREMONY, [kind, large_blob, list(allow)])
    page.confirm_prompt(f"the keychain's prompt (largeBlob {kind})")
    answer = lambda: page.script("return document.documentElement.dataset.blob || null")  # noqa: E731
    page.wait(answer, f"the largeBlob {kind}")
    return json.loads(answer())


def large_blob_written_and_read_back(page, site):
    """getClientCapabilities says largeBlob; a passkey made with `support: "required"` is `supported`; a blob written
    at one sign-in (`write`, one allowed credential) is read back at the next (`read`) as an ArrayBuffer of the page's
    realm; a write without exactly one allowed credential is NotSupportedError, before any prompt."""
    page.goto(site.origin + "/")
    assert page.async_script(EXTENSION_CAPABILITIES)["extension:largeBlob"] is True
    made = large_blob_ceremony(page, "create", {"support": "required"})
    assert made["supported"] is True, made
    assert large_blob_ceremony(page, "get", {"write": "the site's blob"}, [made["id"]])["written"] is True
    read = large_blob_ceremony(page, "get", {"read": True})
    assert read["blobIsBuffer"] is True and read["blob"] == "the site's blob", read
    refused = page.async_script("""
      const done = arguments[arguments.length - 1];
      navigator.credentials.get({publicKey: {challenge: new Uint8Array(32),
                                             extensions: {largeBlob: {write: new Uint8Array([1])}}}})
        .then(() => done("resolved"), (e) => done(e.name));
    """)
    assert refused == "NotSupportedError"
    assert not page.prompt_shown()
