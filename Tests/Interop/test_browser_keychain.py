"""The Sesame Keychain in Chromium (issue 15): headless Debian Chromium with the extension in Extensions/browser
loaded (`--load-extension`) and the native host registered in the profile by `sesame keychain install-browser`.
No virtual authenticator is used anywhere: every passkey here is made and used by the keychain, through the
extension's prompts, which the tests answer with the keyboard as a person would (the prompts act only on trusted
input, and their content is in a closed shadow root the page cannot read).

First Sesame's own pages (`$SESAME_BIN serve`), then a second site on another origin whose relying party is
py_webauthn in a small Flask app (browser_keychain_fixtures.py)."""

import json
import pathlib
import time

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.support.ui import WebDriverWait

from browser_keychain_fixtures import (SIGN_UP_FORM, HOST_ELEMENT, TOTP_SECRET, KeychainBrowser, ask_to_join, exported_cxf,  # noqa: F401
                                      AXE_VIOLATIONS, axe_core_source, png_without_qr, totp_qr_png,
                                      is_eff_words, keychain_browser, second_site, server, two_synced_devices,
                                      devices_synced_through_serve, large_blob_written_and_read_back,
                                      prf_across_two_devices, prf_on_one_device)
from conftest import ROOT, b64url
from test_browser_flows import SCREENSHOTS, api, find, open_page, signed_in, type_into, wait


def prompt_shown(driver) -> bool:
    return driver.execute_script(f"return !!document.querySelector('{HOST_ELEMENT}')")


def prompt_parts(driver) -> list:
    """The elements inside the prompt's closed shadow root, as the DevTools protocol sees them (it reaches closed
    shadow roots; the page does not): dicts with nodeId, localName, attrs, text."""
    found = []

    def walk(node, inside):
        attrs = node.get("attributes", [])
        attrs = dict(zip(attrs[::2], attrs[1::2]))
        if inside and node.get("nodeType") == 1:
            text = "".join(c.get("nodeValue", "") for c in node.get("children", []) if c.get("nodeType") == 3)
            found.append({"nodeId": node["nodeId"], "localName": node["localName"], "attrs": attrs, "text": text})
        for child in node.get("children", []):
            walk(child, inside)
        for shadow in node.get("shadowRoots", []):
            walk(shadow, inside or node.get("localName") == HOST_ELEMENT)

    walk(driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1, "pierce": True})["root"], False)
    return found


def prompt_armed(driver) -> bool:
    """Whether the prompt accepts input: shown, unobscured and unmoved for the settle time (relay.js marks its
    sheet or list data-armed, inside the closed shadow root)."""
    return any(part["attrs"].get("data-armed") == "true" for part in prompt_parts(driver))


def wait_prompt(driver, what="the keychain's prompt"):
    """Waits until the prompt shows and accepts input (before the settle time it ignores clicks and keys)."""
    wait(driver, prompt_shown, what=what)
    try:
        WebDriverWait(driver, 30, poll_frequency=0.1).until(prompt_armed)
    except TimeoutException:
        in_the_way = [p["attrs"]["data-obstruction"] for p in prompt_parts(driver) if "data-obstruction" in p["attrs"]]
        pytest.fail(f"{what} never accepted input; in the way: {in_the_way}")


def press(driver, *keys):
    ActionChains(driver).send_keys(*keys).perform()


def passkeys(vault) -> list:
    return [item for item in vault.items() if "passkey" in json.dumps(item).lower()]


def stop_extension_worker(driver):
    """Stops the extension's service worker as the browser does to an idle one (DevTools protocol); the next message
    starts it again with fresh memory."""
    targets = driver.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]
    workers = [t for t in targets if t["type"] == "service_worker" and t["url"].startswith("chrome-extension://")]
    assert len(workers) == 1, targets
    assert driver.execute_cdp_cmd("Target.closeTarget", {"targetId": workers[0]["targetId"]}).get("success", True)
    wait(driver, lambda d: not [t for t in d.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]
                                if t["targetId"] == workers[0]["targetId"]], what="the service worker stopped")


def sign_up(driver, server, username, display_name):
    open_page(driver, server, "/signup")
    type_into(driver, "username", username)
    type_into(driver, "display-name", display_name)
    find(driver, "signup-button").click()
    wait_prompt(driver, "the save-a-passkey prompt")
    # The page cannot see into the prompt.
    assert driver.execute_script(f"return document.querySelector('{HOST_ELEMENT}').shadowRoot") is None
    # (The page's catalog messages, which hold words like "metadata", are left out of the search.)
    assert username not in driver.execute_script(
        "const copy = document.documentElement.cloneNode(true);"
        " copy.querySelector('#sesame-messages')?.remove(); return copy.outerHTML")
    press(driver, Keys.ENTER)  # "Save passkey" has the focus
    signed_in(driver, server)


def sign_out(driver, server):
    find(driver, "sign-out").click()
    wait(driver, lambda d: d.current_url.startswith(server.origin + "/signin"), what="the sign-in page")


def dismiss_immediate(driver):
    """The sign-in page first asks for a passkey available at once (mediation "immediate"); the keychain has one,
    so its prompt shows; Escape declines it and the page shows its form."""
    wait_prompt(driver, "the prompt for the immediate request")
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: find(d, "username").is_displayed()
         and "No passkey is ready" in d.find_element(By.ID, "message").text, what="the sign-in form")
    # The page then focuses its username field, a webauthn field, so the keychain's AutoFill suggestions may open at
    # once (before this wait could see the prompt gone): take the focus away, so that every test goes on from a page
    # with nothing of the keychain showing.
    driver.execute_script("if (document.activeElement) document.activeElement.blur();")
    wait(driver, lambda d: not prompt_shown(d), what="the keychain's prompt closed")


def screenshot(driver, name):
    """The window as the person sees it, prompt included, into docs/screenshots/ (for the README)."""
    # The prompt painted: two animation frames after it is in the DOM (the first may run before its layout).
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(done));")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def session_method(driver):
    sessions = api(driver, "GET", "/api/account/sessions")[1]
    return [s for s in sessions if s["current"]][0]["method"]


def test_install_browser_writes_the_host_manifest(keychain_browser):
    manifest_dir = keychain_browser.profile / "NativeMessagingHosts"
    manifest = json.loads((manifest_dir / "dev.sesame.keychain.json").read_text())
    assert manifest["allowed_origins"] == ["chrome-extension://dpeiojhnbjhjooimcpbchnhkmedcmnha/"]
    assert manifest["type"] == "stdio"
    launcher = (manifest_dir / "sesame-keychain-host").read_text()
    assert "'keychain' 'native-host' '--dir'" in launcher and str(keychain_browser.vault.path) in launcher
    assert "--load-extension=" in keychain_browser.install_output


def test_sesame_sign_up_then_modal_immediate_and_autofill_sign_in(keychain_browser, server):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "ada", "Ada Lovelace")
    assert "Ada Lovelace" in find(driver, "who").text
    stored = server.passkey_lines("ada")
    assert len(stored) == 1
    mine = passkeys(vault)
    assert len(mine) == 1 and "localhost" in json.dumps(mine[0])
    # The server saw a synced passkey (backup eligible and backed up).
    assert "Synced" in driver.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").text

    # Modal: decline the immediate prompt, then the page's "sign in with a passkey" button.
    sign_out(driver, server)
    dismiss_immediate(driver)
    find(driver, "passkey-button").click()
    wait_prompt(driver, "the modal sign-in prompt")
    screenshot(driver, "keychain-prompt")
    press(driver, Keys.ENTER)  # the one account has the focus
    signed_in(driver, server)
    assert session_method(driver).startswith("passkey")

    # AutoFill: focus the username field, pick the passkey from the suggestions; nothing else is asked.
    sign_out(driver, server)
    dismiss_immediate(driver)
    find(driver, "username").click()
    wait_prompt(driver, "the AutoFill suggestions")
    screenshot(driver, "keychain-autofill")
    assert driver.find_element(By.ID, "username").get_attribute("value") == ""
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    signed_in(driver, server)
    assert session_method(driver).startswith("passkey")

    # Immediate: the prompt shown on load signs in with one key press.
    sign_out(driver, server)
    wait_prompt(driver, "the prompt for the immediate request")
    press(driver, Keys.ENTER)
    signed_in(driver, server)
    assert "last used never" not in server.passkey_lines("ada")[0]


def test_sesame_with_an_empty_keychain_falls_back_silently(keychain_browser, server):
    driver = keychain_browser.driver
    open_page(driver, server, "/signin")
    wait(driver, lambda d: find(d, "username").is_displayed(), what="the sign-in form")
    time.sleep(1)
    assert not prompt_shown(driver), "nothing is offered when the keychain has no passkey for the site"
    find(driver, "username").click()
    time.sleep(1)
    assert not prompt_shown(driver)


def test_second_site_registers_and_signs_in_with_py_webauthn(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    status = lambda d: d.find_element(By.ID, "status").text  # noqa: E731
    type_into(driver, "username", "lin")
    find(driver, "register").click()
    wait_prompt(driver)
    press(driver, Keys.ENTER)
    wait(driver, lambda d: status(d) == "registered lin", what="registration")
    assert second_site.verified == [("registration", "lin", True)]
    assert any("second.localhost" in json.dumps(p) for p in passkeys(vault))

    # Modal sign-in.
    driver.get(second_site.origin + "/")
    find(driver, "signin").click()
    wait_prompt(driver)
    press(driver, Keys.ENTER)
    wait(driver, lambda d: status(d) == "signed in as lin", what="modal sign-in")

    # AutoFill sign-in.
    driver.get(second_site.origin + "/")
    find(driver, "username").click()
    wait_prompt(driver, "the AutoFill suggestions")
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    wait(driver, lambda d: status(d) == "signed in as lin", what="AutoFill sign-in")
    assert [v[0] for v in second_site.verified] == ["registration", "authentication", "authentication"]

    # The credential the page got is indistinguishable in shape from the browser's own.
    shape = driver.execute_async_script("""
      const done = arguments[0];
      const options = await (await fetch("/signin/options", {method: "POST"})).json();
      window.conditional && window.conditional.abort();
      const pending = navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
      done("started");
      window.pendingCredential = pending;
    """)
    assert shape == "started"
    wait_prompt(driver)
    press(driver, Keys.ENTER)
    details = driver.execute_async_script("""
      const done = arguments[0];
      const c = await window.pendingCredential;
      done({
        isPKC: c instanceof PublicKeyCredential, tag: Object.prototype.toString.call(c),
        own: Object.getOwnPropertyNames(c), type: c.type, attachment: c.authenticatorAttachment,
        rawIdIsBuffer: c.rawId instanceof ArrayBuffer, idMatches: c.id === c.toJSON().id,
        response: Object.prototype.toString.call(c.response), ext: c.getClientExtensionResults(),
        getter: Object.getOwnPropertyDescriptor(PublicKeyCredential.prototype, "rawId").get.toString(),
        get: navigator.credentials.get.toString(), jsonKeys: Object.keys(c.toJSON()),
      });
    """)
    assert details == {
        "isPKC": True, "tag": "[object PublicKeyCredential]", "own": [], "type": "public-key",
        "attachment": "platform", "rawIdIsBuffer": True, "idMatches": True,
        "response": "[object AuthenticatorAssertionResponse]", "ext": {},
        "getter": "function get rawId() { [native code] }", "get": "function get() { [native code] }",
        "jsonKeys": ["id", "rawId", "response", "authenticatorAttachment", "clientExtensionResults", "type"],
    }


class ChromiumPage:
    """The few page actions the shared checks of browser_keychain_fixtures (PRF, largeBlob) need, in Chromium."""

    def __init__(self, driver):
        self.driver = driver

    def goto(self, url):
        self.driver.get(url)

    def type(self, element_id, text):
        type_into(self.driver, element_id, text)

    def click(self, element_id):
        find(self.driver, element_id).click()

    def confirm_prompt(self, what):
        wait_prompt(self.driver, what)
        press(self.driver, Keys.ENTER)

    def text(self, element_id):
        return find(self.driver, element_id).text

    def wait(self, condition, what):
        wait(self.driver, lambda d: condition(), what=what)

    def script(self, script, *args):
        return self.driver.execute_script(script, *args)

    def async_script(self, script, *args):
        return self.driver.execute_async_script(script, *args)

    def prompt_shown(self):
        return prompt_shown(self.driver)


def test_large_blob_written_and_read_back(keychain_browser, second_site):
    """largeBlob in Chromium: browser_keychain_fixtures.large_blob_written_and_read_back."""
    large_blob_written_and_read_back(ChromiumPage(keychain_browser.driver), second_site)


def test_prf_agrees_with_python_fido2_and_opens_a_sealed_note(keychain_browser, second_site, tmp_path):
    """PRF in Chromium on the sealed-notes site, every check of browser_keychain_fixtures.prf_on_one_device: the
    capabilities reported, python-fido2's values at registration and sign-in as ArrayBuffers, the note sealed at one
    ceremony and opened at the next, evalByCredential, and its refusals before any prompt."""
    prf_on_one_device(ChromiumPage(keychain_browser.driver), second_site, keychain_browser.vault, tmp_path)


CALL = """
  const [kind, options, done] = arguments;
  const bytes = (n) => new Uint8Array(n).map((_, i) => i + 1);
  const decode = (t) => Uint8Array.from(atob(t.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  if (options.challenge === undefined) options.challenge = bytes(32);
  if (options.user) options.user.id = bytes(16);
  if (options.allowCredentials) options.allowCredentials = options.allowCredentials.map((id) => ({type: "public-key", id: decode(id)}));
  const mediation = options.mediation; delete options.mediation;
  navigator.credentials[kind]({publicKey: options, ...(mediation ? {mediation} : {})})
    .then(() => done("resolved"), (e) => done(e.name));
"""


def test_second_site_is_refused_a_foreign_rp_id_and_another_sites_passkey(keychain_browser, second_site, tmp_path):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    # A passkey for Sesame's origin (http://localhost:PORT, RP ID localhost), made with the CLI.
    options = {"rp": {"id": "localhost", "name": "Sesame"}, "challenge": b64url(b"c" * 32),
               "user": {"id": b64url(b"u" * 16), "name": "ada", "displayName": "Ada"},
               "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    (tmp_path / "options.json").write_text(json.dumps(options))
    made = json.loads(vault.ok("webauthn", "create", "--origin", "http://localhost:8080",
                               "--options", str(tmp_path / "options.json")))
    before = passkeys(vault)
    driver.get(second_site.origin + "/")

    # An RP ID that is not a registrable suffix of the origin: SecurityError, and no prompt at all.
    for rp_id in ("localhost", "example.com", "ond.localhost"):
        answer = driver.execute_async_script(CALL, "create", {
            "rp": {"id": rp_id, "name": "x"}, "user": {"name": "eve", "displayName": "Eve"},
            "pubKeyCredParams": [{"type": "public-key", "alg": -7}]})
        assert answer == "SecurityError", rp_id
        assert not prompt_shown(driver)
    # Asking for the other site's passkey: by its RP ID is a SecurityError, by its ID alone finds nothing.
    assert driver.execute_async_script(CALL, "get", {"rpId": "localhost", "allowCredentials": [made["id"]]}) \
        == "SecurityError"
    assert driver.execute_async_script(CALL, "get", {"allowCredentials": [made["id"]], "mediation": "immediate"}) \
        == "NotAllowedError"
    assert not prompt_shown(driver)
    # A forged message straight to the relay naming the other origin: the origin the browser reports is used.
    forged = driver.execute_async_script("""
      const done = arguments[1];
      window.addEventListener("message", (e) => {
        if (e.data && e.data.source === "sesame-keychain/relay" && e.data.id === "forged") done(e.data.error || e.data);
      });
      window.postMessage({source: "sesame-keychain/page", id: "forged", kind: "get", mediation: "immediate",
                          origin: "http://localhost:8080",
                          options: {challenge: "AAECAwQFBgcICQoLDA0ODw", rpId: "localhost",
                                    allowCredentials: [{type: "public-key", id: arguments[0]}]}}, location.origin);
    """, made["id"])
    assert forged["name"] == "SecurityError" and forged["code"] == "rpIdNotAllowed"
    assert passkeys(vault) == before, "nothing was made, and the other site's passkey was not used"


def test_sesame_signals_rename_the_passkey_and_remove_an_unknown_one(keychain_browser, server):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "dorothy", "Dorothy Vaughan")
    type_into(driver, "display-name", "Dorothy J. Vaughan")
    find(driver, "display-name-save").click()
    # signalCurrentUserDetails reaches the keychain: the passkey takes the new display name.
    wait(driver, lambda d: [p["displayName"] for p in passkeys(vault)] == ["Dorothy J. Vaughan"],
         what="the passkey renamed in the keychain")

    # The server forgets the account; signing in with its passkey makes the page send signalUnknownCredential,
    # and the keychain asks before removing the passkey.
    sign_out(driver, server)
    dismiss_immediate(driver)
    server.admin("users", "delete", "dorothy", "--yes")
    find(driver, "passkey-button").click()
    wait_prompt(driver, "the modal sign-in prompt")
    press(driver, Keys.ENTER)
    wait(driver, lambda d: "isn’t registered" in d.find_element(By.ID, "message").text, what="the server's refusal")
    wait_prompt(driver, "the keychain asking to remove the passkey")
    assert len(passkeys(vault)) == 1, "nothing is removed before the person confirms"
    press(driver, Keys.ENTER)  # "Remove passkey" has the focus
    wait(driver, lambda d: passkeys(vault) == [], what="the passkey removed from the keychain")


def test_sesame_a_security_key_beside_the_keychain_and_a_deleted_passkey_hidden_by_the_signal(keychain_browser,
                                                                                               server):
    from selenium.webdriver.common.virtual_authenticator import (Protocol, Transport,
                                                                 VirtualAuthenticatorOptions)
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "katherine", "Katherine Johnson")
    # The site excludes the keychain's passkey when adding another: the request goes to the browser's own WebAuthn
    # (Chromium's virtual security key stands for the key).
    options = VirtualAuthenticatorOptions()
    options.protocol, options.transport = Protocol.CTAP2, Transport.USB
    options.has_resident_key = options.has_user_verification = options.is_user_verified = True
    driver.add_virtual_authenticator(options)
    try:
        find(driver, "add-security-key").click()
        wait(driver, lambda d: len(server.passkey_lines("katherine")) == 2, what="the security key added")
        assert len(driver.get_credentials()) == 1
    finally:
        driver.remove_virtual_authenticator()
    assert len(passkeys(vault)) == 1 and not passkeys(vault)[0]["hidden"]

    # Deleting the keychain's passkey on the account page: the page signals the passkeys it still accepts, and the
    # keychain hides the one left out (kept, not offered).
    # The keychain's passkey is the synced one; the security key's is "This device only".
    mine = [li for li in driver.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey") if "Synced" in li.text]
    assert len(mine) == 1, [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#passkey-list li.passkey")]
    mine[0].find_element(By.CSS_SELECTOR, ".delete").click()
    mine[0].find_element(By.CSS_SELECTOR, ".confirm-delete").click()
    wait(driver, lambda d: len(server.passkey_lines("katherine")) == 1, what="the server's passkey deleted")
    wait(driver, lambda d: [p["hidden"] for p in passkeys(vault)] == [True], what="the keychain's passkey hidden")


def test_sesame_password_sign_in_with_the_code_filled_from_the_keychain(keychain_browser, server):
    from test_browser_flows import set_password, set_up_totp
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "margaret", "Margaret Hamilton")
    set_password(driver, "correct horse battery")
    uri, totp = set_up_totp(driver)
    vault.ok("add-code", "-", "--site", "localhost", input=uri + "\n")
    # The setup's confirmation field is filled from the keychain.
    find(driver, "totp-code").click()
    wait_prompt(driver, "the verification code suggestions")
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    wait(driver, lambda d: find(d, "totp-code").get_attribute("value") != "", what="the code filled in")
    step = int(time.time() // 30)
    assert find(driver, "totp-code").get_attribute("value") == totp.now()
    find(driver, "totp-confirm-form").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: "Verification codes are on" in d.find_element(By.ID, "message").text,
         what="TOTP confirmation")

    sign_out(driver, server)
    dismiss_immediate(driver)
    find(driver, "other-ways").click()
    type_into(driver, "password-username", "margaret")
    type_into(driver, "password", "correct horse battery")
    # A code is accepted once: sign in with the next time step's code.
    while int(time.time() // 30) == step:
        time.sleep(0.5)
    find(driver, "password-button").click()
    wait(driver, lambda d: find(d, "second-step-form").is_displayed(), what="the second step")
    if driver.switch_to.active_element != find(driver, "code"):
        find(driver, "code").click()
    wait_prompt(driver, "the verification code suggestions")
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    wait(driver, lambda d: find(d, "code").get_attribute("value") != "", what="the code filled in")
    find(driver, "code-button").click()
    signed_in(driver, server)
    assert session_method(driver).startswith("password")


def test_another_device_hands_the_request_back_and_a_locked_keychain_says_so(keychain_browser, second_site):
    from selenium.webdriver.common.virtual_authenticator import (Protocol, Transport,
                                                                 VirtualAuthenticatorOptions)
    driver, vault = keychain_browser.driver, keychain_browser.vault
    status = lambda d: d.find_element(By.ID, "status").text  # noqa: E731
    # "Another device or security key": the browser's own WebAuthn gets the request as the page made it (here
    # Chromium's virtual security key stands for that device).
    options = VirtualAuthenticatorOptions()
    options.protocol, options.transport = Protocol.CTAP2, Transport.USB
    options.has_resident_key = options.has_user_verification = options.is_user_verified = True
    driver.add_virtual_authenticator(options)
    try:
        driver.get(second_site.origin + "/")
        type_into(driver, "username", "grace")
        find(driver, "register").click()
        wait_prompt(driver)
        press(driver, Keys.TAB, Keys.ENTER)  # from "Save passkey" to "Use another device or security key"
        wait(driver, lambda d: status(d) == "registered grace", what="registration on the other device")
        assert len(driver.get_credentials()) == 1
        assert second_site.verified == [("registration", "grace", False)]
        assert passkeys(vault) == [], "the keychain made nothing"
    finally:
        driver.remove_virtual_authenticator()

    # Locked: the prompt says so instead of failing silently; Escape is the person's "no".
    vault.ok("lock")
    driver.get(second_site.origin + "/")
    find(driver, "signin").click()
    wait_prompt(driver, "the locked-keychain prompt")
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: status(d).startswith("error NotAllowedError"), what="the refusal")


def test_sesame_password_filled_from_the_keychain_then_the_automatic_passkey_upgrade(keychain_browser, server):
    from test_browser_flows import set_password
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "katherine", "Katherine Johnson")
    set_password(driver, "correct horse battery")
    # A password-only account: the passkey goes from the server and from the keychain; the password is saved.
    passkey_id = driver.find_element(By.CSS_SELECTOR, "#passkey-list li.passkey").get_attribute("data-id")
    assert api(driver, "DELETE", f"/api/account/passkeys/{passkey_id}")[0] == 200
    vault.ok("delete", passkeys(vault)[0]["id"], "--yes")
    vault.add_password("localhost", "katherine", "correct horse battery")
    assert passkeys(vault) == [] and server.passkey_lines("katherine") == []

    sign_out(driver, server)
    wait(driver, lambda d: find(d, "username").is_displayed(), what="the sign-in form (nothing to offer at once)")
    find(driver, "other-ways").click()
    find(driver, "password-username").click()
    wait_prompt(driver, "the saved password suggestions")
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    wait(driver, lambda d: find(d, "password").get_attribute("value") == "correct horse battery",
         what="the password filled in")
    assert find(driver, "password-username").get_attribute("value") == "katherine"
    # The browser may stop an idle extension service worker at any time; what it knew must outlive it.
    stop_extension_worker(driver)
    find(driver, "password-button").click()
    signed_in(driver, server)
    assert session_method(driver).startswith("password")
    # The account page asks for a passkey with mediation "conditional": the keychain makes it with no prompt,
    # since the person just used its saved password for this user here.
    wait(driver, lambda d: len(server.passkey_lines("katherine")) == 1, what="the automatic passkey upgrade")
    assert len(passkeys(vault)) == 1
    assert not prompt_shown(driver)


def test_conditional_create_without_a_password_just_used_is_not_allowed(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    answer = driver.execute_async_script(CALL.replace("const mediation = options.mediation;",
                                                      "const mediation = 'conditional';"), "create", {
        "rp": {"name": "x"}, "user": {"name": "eve", "displayName": "Eve"},
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}]})
    assert answer == "NotAllowedError"
    assert passkeys(vault) == [] and not prompt_shown(driver)


def test_prf_agrees_across_two_devices_synced_through_sesame_serve(sesame_bin, tmp_path, second_site,
                                                                   devices_synced_through_serve):
    """PRF across devices, in the browser: two keychain devices of one account of a real `sesame serve`, each with its
    own Chromium profile; every check of browser_keychain_fixtures.prf_across_two_devices (the same outputs on the
    other device after a sync, the note sealed on one opened on the other, another passkey's outputs different)."""
    from contextlib import contextmanager
    a, b = devices_synced_through_serve

    @contextmanager
    def open_page(vault):
        running = KeychainBrowser(sesame_bin, tmp_path, vault=vault)
        try:
            yield ChromiumPage(running.driver)
        finally:
            running.stop()
    prf_across_two_devices(open_page, a, b, second_site, tmp_path)


def test_sesame_a_typed_password_is_offered_for_saving_after_sign_in(keychain_browser, server):
    from test_browser_flows import set_password
    driver, vault = keychain_browser.driver, keychain_browser.vault
    sign_up(driver, server, "mjackson", "Mary Jackson")
    set_password(driver, "correct horse battery")
    time.sleep(1)
    assert not prompt_shown(driver), "a new password (set on the account page) is not offered"
    sign_out(driver, server)
    dismiss_immediate(driver)
    find(driver, "other-ways").click()
    type_into(driver, "password-username", "mjackson")
    type_into(driver, "password", "correct horse battery")
    find(driver, "password-button").click()
    signed_in(driver, server)
    wait_prompt(driver, "the offer to save the password")
    assert [i for i in vault.items() if i["kind"] == "password"] == []
    press(driver, Keys.ENTER)  # "Save password"
    wait(driver, lambda d: any(i["kind"] == "password" for i in vault.items()), what="the password saved")
    saved = [i for i in vault.items() if i["kind"] == "password"][0]
    assert saved["sites"] == ["localhost"] and "mjackson" in saved["title"]
    assert vault.show(saved["id"], reveal=True)["password"] == "correct horse battery"


# --- Clickjacking: the prompt acts only once shown, unobscured and unmoved, for the settle time -------------------
# Each test below starts a create request on the second site (the prompt "Save a passkey for second.localhost?"),
# lets the page attack the prompt, then sends real clicks through the DevTools protocol (Input.dispatchMouseEvent:
# trusted input, as a person's) at the "Save passkey" button, and checks that the page got no credential and the
# keychain made no passkey; then that a plain click once the prompt has settled still saves the passkey.

SETTLE = 0.5  # relay.js SETTLE_MS

START_CREATE = """
  window.outcome = null;
  const bytes = (n) => new Uint8Array(n).map((_, i) => i + 1);
  navigator.credentials.create({publicKey: {
    rp: {name: "Second site"}, challenge: bytes(32),
    user: {id: bytes(16), name: arguments[0], displayName: arguments[0]},
    pubKeyCredParams: [{type: "public-key", alg: -7}]}})
    .then((c) => { window.outcome = "credential " + c.id; }, (e) => { window.outcome = e.name; });
"""


# In the page: when the prompt's host appeared, and when the first trusted mouse press came.
RECORD_TIMES = """
  window.times = {};
  new MutationObserver(() => {
    if (!window.times.shown && document.querySelector('sesame-keychain')) window.times.shown = performance.now();
  }).observe(document.documentElement, {childList: true});
  window.addEventListener('mousedown', (e) => {
    if (e.isTrusted && !window.times.clicked) window.times.clicked = performance.now();
  }, true);
"""


# A page style sheet giving the prompt's host an opaque ::after over the whole viewport that clicks pass through.
PSEUDO_COVER = """
  const sheet = document.createElement("style");
  sheet.textContent = "sesame-keychain::after { content: 'Click anywhere to play!'; position: fixed; inset: 0; "
    + "background: #fff; font-size: 40px; pointer-events: none; z-index: 2147483647 }";
  document.head.append(sheet);
  window.uncover = () => sheet.remove();
"""


def outcome(driver):
    return driver.execute_script("return window.outcome")


def save_button_centre(driver):
    """The centre of the prompt's "Save passkey" button, from the DevTools protocol's box model."""
    buttons = [p for p in prompt_parts(driver) if p["localName"] == "button" and p["text"] == "Save passkey"]
    assert len(buttons) == 1, prompt_parts(driver)
    quad = driver.execute_cdp_cmd("DOM.getBoxModel", {"nodeId": buttons[0]["nodeId"]})["model"]["border"]
    return sum(quad[0::2]) / 4, sum(quad[1::2]) / 4


def click_at(driver, x, y):
    """A real left click at (x, y) in the viewport: trusted input, as a person's."""
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        driver.execute_cdp_cmd("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                            "clickCount": 0 if kind == "mouseMoved" else 1})


def assert_nothing_saved(driver, vault, what):
    """The click did not complete the request: a moment later the page's promise is still pending (or rejected with
    NotAllowedError), and the keychain holds no passkey."""
    time.sleep(1)
    assert outcome(driver) in (None, "NotAllowedError"), what
    assert passkeys(vault) == [], what


def start_prompt(driver, second_site, name):
    driver.get(second_site.origin + "/")
    driver.execute_script(START_CREATE, name)
    wait(driver, prompt_shown, what="the save-a-passkey prompt")


def click_when_settled(driver, vault):
    """The person's plain click, once the prompt accepts input, saves the passkey."""
    wait_prompt(driver, "the save-a-passkey prompt")
    click_at(driver, *save_button_centre(driver))
    wait(driver, lambda d: (outcome(d) or "").startswith("credential "), what="the credential")
    assert len(passkeys(vault)) == 1


def test_clickjacking_a_faded_prompt_is_not_clickable(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    start_prompt(driver, second_site, "faded")
    wait_prompt(driver, "the prompt")
    x, y = save_button_centre(driver)
    # Opacity 0 on the host's ancestor (the root element), kept while the person clicks.
    driver.execute_script("document.documentElement.style.opacity = '0'")
    time.sleep(SETTLE + 0.2)
    assert not prompt_armed(driver)
    click_at(driver, x, y)
    assert_nothing_saved(driver, vault, "a click on the invisible prompt (root element at opacity 0)")
    # Opacity 0 on the host itself, set again and again (relay.js restores the host's locked style each time).
    driver.execute_script("""
      document.documentElement.style.opacity = '';
      window.fading = setInterval(() => {
        const host = document.querySelector('sesame-keychain');
        host.style.setProperty('opacity', '0', 'important');
      }, 50);
    """)
    time.sleep(SETTLE + 0.2)
    click_at(driver, x, y)
    assert_nothing_saved(driver, vault, "a click on the prompt the page keeps fading")
    # The page stops: once the prompt has settled, the person's click saves.
    driver.execute_script("clearInterval(window.fading)")
    click_when_settled(driver, vault)


def test_clickjacking_an_overlay_that_lets_clicks_through_is_detected(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    start_prompt(driver, second_site, "covered")
    wait_prompt(driver, "the prompt")
    x, y = save_button_centre(driver)
    # An opaque layer above the prompt that clicks pass through. Only a top-layer element shown after the prompt
    # can be above it; once in the page's light DOM, once inside the page's own closed shadow root (where a
    # document query does not find it: IntersectionObserver v2's occlusion check does).
    overlay = """
      const cover = document.createElement("div");
      cover.popover = "manual";
      cover.textContent = "Click anywhere to play!";
      cover.style.cssText = "position: fixed; inset: 0; width: 100vw; height: 100vh; max-width: none; "
        + "max-height: none; margin: 0; border: 0; background: #fff; font-size: 40px; "
        + "pointer-events: none; z-index: 2147483647";
      const holder = document.createElement("div");
      const parent = arguments[0] ? holder.attachShadow({mode: "closed"}) : holder;
      parent.append(cover);
      document.body.append(holder);
      cover.showPopover();
      window.uncover = () => holder.remove();
    """
    for hidden in (False, True):
        driver.execute_script(overlay, hidden)
        time.sleep(SETTLE + 0.2)
        assert driver.execute_script("return document.elementFromPoint(arguments[0], arguments[1]).localName",
                                     x, y) == HOST_ELEMENT, "the overlay lets clicks through to the prompt"
        assert not prompt_armed(driver)
        click_at(driver, x, y)
        assert_nothing_saved(driver, vault, f"a click through the overlay (in a closed shadow root: {hidden})")
        driver.execute_script("window.uncover()")
    # The host's own ::after (its inline style does not reach its pseudo-elements), painted inside the top layer.
    driver.execute_script(PSEUDO_COVER)
    time.sleep(SETTLE + 0.2)
    assert not prompt_armed(driver)
    click_at(driver, x, y)
    assert_nothing_saved(driver, vault, "a click through the host's ::after")
    driver.execute_script("window.uncover()")
    click_when_settled(driver, vault)


def test_clickjacking_a_click_right_after_the_prompt_shows_is_ignored(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    # Where "Save passkey" will be: from a first prompt, which the person then cancels.
    start_prompt(driver, second_site, "early")
    wait_prompt(driver, "the prompt")
    x, y = save_button_centre(driver)
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: outcome(d) == "NotAllowedError", what="the cancelled request")
    # The page watches for the prompt and records when it appeared and when a trusted click arrived.
    driver.execute_script(RECORD_TIMES)
    driver.execute_script(START_CREATE, "early")
    while not prompt_shown(driver):
        pass
    click_at(driver, x, y)  # the person was about to click there: the prompt appeared under the pointer
    times = driver.execute_script("return window.times")
    assert times["clicked"] - times["shown"] < SETTLE * 1000, times
    assert_nothing_saved(driver, vault, f"a click {times['clicked'] - times['shown']:.0f} ms after the prompt showed")
    assert outcome(driver) is None, "the request is still open"
    click_when_settled(driver, vault)


def test_clickjacking_a_removed_prompt_cancels_the_request(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    start_prompt(driver, second_site, "removed")
    wait_prompt(driver, "the prompt")
    x, y = save_button_centre(driver)
    # The page takes the host out and puts it back elsewhere (out of the top layer, under its own content).
    driver.execute_script("""
      const host = document.querySelector('sesame-keychain');
      host.remove();
      document.body.append(host);
    """)
    wait(driver, lambda d: outcome(d) == "NotAllowedError", what="the request cancelled")
    click_at(driver, x, y)
    assert_nothing_saved(driver, vault, "a click on the prompt the page moved")
    assert outcome(driver) == "NotAllowedError"
    # Hiding it (the popover closed by the page) is the same.
    driver.execute_script(START_CREATE, "hidden")
    wait_prompt(driver, "the second prompt")
    driver.execute_script("""
      for (const host of document.querySelectorAll('sesame-keychain')) if (host.matches(':popover-open')) host.hidePopover();
    """)
    wait(driver, lambda d: outcome(d) == "NotAllowedError", what="the request cancelled")
    assert_nothing_saved(driver, vault, "the hidden prompt")
    driver.execute_script("for (const host of document.querySelectorAll('sesame-keychain')) host.remove()")
    driver.execute_script(START_CREATE, "shown")
    click_when_settled(driver, vault)


# --- The toolbar window (popup.html) -------------------------------------------------------------------------------

EXTENSION_ID = "dpeiojhnbjhjooimcpbchnhkmedcmnha"
WINDOW = f"chrome-extension://{EXTENSION_ID}/popup.html"
IMAGES = ROOT / "docs" / "images"


def open_window(driver, site_origin):
    """The window in a tab of its own, for the tab showing `site_origin` (`popup.html?tab=ID`): what the toolbar
    button opens, where a test can reach it."""
    driver.switch_to.new_window("tab")
    driver.get(WINDOW)
    tabs = driver.execute_async_script("chrome.tabs.query({}, (tabs) => arguments[0](tabs.map((t) => [t.id, t.url])))")
    [tab_id] = [i for i, url in tabs if url and url.startswith(site_origin)]
    driver.get(f"{WINDOW}?tab={tab_id}")


def visible(driver, element_id):
    return driver.find_element(By.ID, element_id).is_displayed()


def text_of(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def window_items(driver, list_id):
    """The labels of a list's items, read in one step (the list is redrawn as a search answers)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map((b) => b.getAttribute('aria-label'))",
        f"#{list_id} button")


def test_window_unlocks_searches_shows_an_item_and_locks(keychain_browser, second_site, tmp_path):
    import pyotp

    driver, vault = keychain_browser.driver, keychain_browser.vault
    vault.add_password(second_site.rp_id, "lin", "kitten-orbit-velvet-42", "--notes", "the team's shared login")
    vault.add_password("example.org", "bob", "unrelated-password-9", "--notes", "nothing to do with it")
    vault.add_code(f"otpauth://totp/Second:lin?secret={TOTP_SECRET}&issuer=Second", "--site", second_site.rp_id)
    options = {"rp": {"id": second_site.rp_id, "name": "Second"}, "challenge": b64url(b"c" * 32),
               "user": {"id": b64url(b"u" * 16), "name": "lin", "displayName": "Lin Second"},
               "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    (tmp_path / "options.json").write_text(json.dumps(options))
    vault.ok("webauthn", "create", "--origin", second_site.origin, "--options", str(tmp_path / "options.json"))
    vault.ok("lock")
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)

    # Locked: the passphrase, typed here. A wrong one says so and leaves it locked.
    wait(driver, lambda d: visible(d, "unlock-view") and d.switch_to.active_element.get_attribute("id") == "passphrase",
         what="the unlock form with the focus")
    press(driver, "not the passphrase", Keys.ENTER)
    wait(driver, lambda d: "does not open" in text_of(d, "unlock-error"), what="the wrong passphrase refused")
    assert vault.run("list").returncode != 0, "still locked"
    IMAGES.mkdir(parents=True, exist_ok=True)
    press(driver, "correct horse battery staple", Keys.ENTER)
    wait(driver, lambda d: visible(d, "list-view") and window_items(d, "site-items"), what="the list after unlocking")
    assert driver.find_element(By.ID, "passphrase").get_attribute("value") == ""
    assert vault.ok("list")  # the session the window started is the CLI's too

    # The site's items first, then the others.
    assert text_of(driver, "site-heading") == f"This site: {second_site.rp_id}"
    site_items = window_items(driver, "site-items")
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert sorted(site_items) == sorted([f"Code: {second_site.rp_id}, Second, lin",
                                         f"Passkey: {second_site.rp_id}, lin · created {today}",
                                         f"Password: {second_site.rp_id}, lin"]), site_items
    assert window_items(driver, "other-items") == ["Password: example.org, bob"]
    driver.find_element(By.TAG_NAME, "main").screenshot(str(IMAGES / "keychain-window.png"))

    # Search, from the keyboard: notes, user names and sites; Escape clears.
    assert driver.switch_to.active_element.get_attribute("id") == "search"
    press(driver, "TEAM")
    wait(driver, lambda d: window_items(d, "site-items") == [f"Password: {second_site.rp_id}, lin"]
         and window_items(d, "other-items") == [], what="a search over notes")
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: len(window_items(d, "site-items")) == 3, what="the search cleared")
    press(driver, "bob")
    wait(driver, lambda d: window_items(d, "other-items") == ["Password: example.org, bob"]
         and window_items(d, "site-items") == [], what="a search over user names")
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: len(window_items(d, "site-items")) == 3, what="the search cleared")

    # The password's page: arrow down to it, Enter.
    labels = window_items(driver, "site-items")
    steps = labels.index(f"Password: {second_site.rp_id}, lin") + 1
    press(driver, *([Keys.ARROW_DOWN] * steps), Keys.ENTER)
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin", what="the item's page")
    assert text_of(driver, "password-value") == "••••••••"
    assert "kitten" not in driver.find_element(By.ID, "item-view").get_attribute("innerText")
    find(driver, "toggle-password").click()
    wait(driver, lambda d: text_of(d, "password-value") == "kitten-orbit-velvet-42", what="the password shown")
    assert find(driver, "toggle-password").get_attribute("aria-pressed") == "true"
    find(driver, "toggle-password").click()
    wait(driver, lambda d: text_of(d, "password-value") == "••••••••", what="the password hidden again")
    passkey_lines = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#item-passkeys li")]
    assert len(passkey_lines) == 1 and passkey_lines[0].startswith("lin (Lin Second), created 20"), passkey_lines
    assert text_of(driver, "notes-value") == "the team's shared login"
    driver.find_element(By.TAG_NAME, "main").screenshot(str(IMAGES / "keychain-window-item.png"))

    # Copy: the clipboard holds the password, and a clearing is scheduled in the worker.
    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": f"chrome-extension://{EXTENSION_ID}",
        "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    find(driver, "copy-password").click()
    wait(driver, lambda d: "clipboard is cleared in 30 s" in text_of(d, "status"), what="the copy confirmed")
    copied = driver.execute_async_script(
        "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('error ' + e.name))")
    assert copied == "kitten-orbit-velvet-42"
    alarm = driver.execute_async_script("chrome.alarms.get('clear clipboard', (a) => arguments[0](a || null))")
    assert alarm and 25_000 <= alarm["scheduledTime"] - time.time() * 1000 <= 31_000, alarm

    # Back (Escape), then the code generator's page: the code pyotp computes, with its countdown, rolling over.
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: visible(d, "list-view"), what="the list again")
    driver.execute_script(
        "[...document.querySelectorAll('#site-items button')].find((b) => b.ariaLabel.startsWith('Code:')).focus()")
    press(driver, Keys.ENTER)
    wait(driver, lambda d: len(text_of(d, "code-value")) == 6 and "changes in" in text_of(d, "code-countdown"),
         what="the code and its countdown")
    totp = pyotp.TOTP(TOTP_SECRET)
    now = time.time()
    first = text_of(driver, "code-value")
    assert first in {totp.at(now), totp.at(now - 30)}
    left = int(text_of(driver, "code-countdown").split()[2])
    assert 0 <= left <= 30
    wait_long = WebDriverWait(driver, 40, poll_frequency=0.2)
    wait_long.until(lambda d: text_of(d, "code-value") not in ("", first), "the next code after the countdown")
    assert text_of(driver, "code-value") in {totp.at(time.time()), totp.at(time.time() - 30)}

    # The copied password is gone from the clipboard once its 30 s are up (the worker's alarm, Chromium's
    # offscreen document).
    read_clipboard = "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('error ' + e.name))"
    WebDriverWait(driver, 45, poll_frequency=0.5).until(
        lambda d: d.execute_async_script(read_clipboard) == "", "the clipboard cleared")

    # Lock now: the window asks for the passphrase again, and the vault is locked for the CLI too.
    find(driver, "lock").click()
    wait(driver, lambda d: visible(d, "unlock-view"), what="the unlock form after locking")
    assert vault.run("list").returncode != 0



def test_window_edits_with_the_generator_deletes_and_undoes(keychain_browser, second_site):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    item_id = vault.add_password(second_site.rp_id, "lin", "old-password-1", "--notes", "first note")
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)  # the fixture's vault is unlocked: straight to the list
    wait(driver, lambda d: window_items(d, "site-items") == [f"Password: {second_site.rp_id}, lin"], what="the list")
    press(driver, Keys.ENTER)  # from the search field, Enter opens the first item
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin", what="the item")

    # Edit: a new user name, a generated password (its strength in bits), notes; saved through the host.
    find(driver, "edit").click()
    wait(driver, lambda d: visible(d, "edit-view")
         and d.switch_to.active_element.get_attribute("id") == "edit-username", what="the edit form")
    username = find(driver, "edit-username")
    username.clear()
    username.send_keys("lin2")
    # Words: the host draws them from the EFF long word list (the library's generator, as the CLI's --words).
    find(driver, "gen-mode-words").click()
    wait(driver, lambda d: visible(d, "gen-word-count") and "words from the EFF long word list" in text_of(d, "strength"),
         what="a generated passphrase")
    assert text_of(driver, "strength") == ("About 77 bits of entropy (6 words from the EFF long word list (CC BY 3.0), "
                                           "7,776 words).")
    phrase = find(driver, "edit-password").get_attribute("value")
    assert is_eff_words(phrase, 6), phrase
    count = find(driver, "gen-word-count")
    count.clear()
    count.send_keys("4")
    find(driver, "generate").click()
    wait(driver, lambda d: text_of(d, "strength").startswith("About 51 bits of entropy (4 words"), what="4 words")
    find(driver, "gen-mode-characters").click()
    wait(driver, lambda d: not visible(d, "gen-word-count") and "characters from" in text_of(d, "strength"),
         what="characters again")
    find(driver, "generate").click()
    wait(driver, lambda d: "bits of entropy" in text_of(d, "strength"), what="a generated password")
    generated = find(driver, "edit-password").get_attribute("value")
    assert len(generated) == 20 and generated != "old-password-1"
    assert text_of(driver, "strength") == "About 122 bits of entropy (20 characters from 71)."
    notes = find(driver, "edit-notes")
    notes.clear()
    notes.send_keys("changed in the window")
    driver.find_element(By.TAG_NAME, "main").screenshot(str(IMAGES / "keychain-window-edit.png"))
    find(driver, "save").click()
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin2"
         and "Saved" in text_of(d, "status-text"), what="the saved item")
    shown = vault.show(item_id, reveal=True)
    assert shown["username"] == "lin2" and shown["password"] == generated, shown
    assert shown["notes"] == "changed in the window"

    # Delete, then Undo (focused after deleting): the item is back under its own ID.
    find(driver, "delete").click()
    wait(driver, lambda d: visible(d, "list-view") and "Deleted" in text_of(d, "status-text")
         and d.switch_to.active_element.get_attribute("id") == "undo", what="the deletion with its undo")
    assert vault.items() == []
    press(driver, Keys.ENTER)
    wait(driver, lambda d: "Restored" in text_of(d, "status-text")
         and window_items(d, "site-items") == [f"Password: {second_site.rp_id}, lin2"], what="the undone deletion")
    assert [item["id"] for item in vault.items()] == [item_id]
    assert vault.show(item_id, reveal=True)["password"] == generated


def test_window_clipboard_time_is_a_setting_the_clearing_honours(keychain_browser, second_site):
    """Settings: how long a copied secret stays on the clipboard, kept in extension storage; the copy says the time
    chosen, and the worker clears the clipboard after it (10 s: the worker's timer, ahead of its 30 s alarm)."""
    from selenium.webdriver.support.ui import Select
    driver, vault = keychain_browser.driver, keychain_browser.vault
    vault.add_password(second_site.rp_id, "lin", "copied-then-cleared-7")
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view") and window_items(d, "site-items"), what="the list")
    stored = "chrome.storage.local.get('clipboardClearSeconds', (s) => arguments[0](s.clipboardClearSeconds ?? null))"
    assert driver.execute_async_script(stored) is None
    driver.find_element(By.CSS_SELECTOR, "#settings summary").click()
    assert Select(find(driver, "clear-seconds")).first_selected_option.text == "30 seconds"
    Select(find(driver, "clear-seconds")).select_by_visible_text("10 seconds")
    wait(driver, lambda d: d.execute_async_script(stored) == 10, what="the setting stored")
    assert text_of(driver, "status-text") == "Copied secrets now leave the clipboard after 10 seconds."
    # It stays chosen in a new window.
    driver.refresh()
    wait(driver, lambda d: visible(d, "list-view") and window_items(d, "site-items"), what="the list again")
    assert find(driver, "clear-seconds").get_attribute("value") == "10"

    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": f"chrome-extension://{EXTENSION_ID}",
        "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    find(driver, "site-items").find_element(By.TAG_NAME, "button").click()
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin", what="the item")
    read_clipboard = "navigator.clipboard.readText().then(arguments[0], (e) => arguments[0]('error ' + e.name))"
    copied_at = time.monotonic()
    find(driver, "copy-password").click()
    wait(driver, lambda d: "clipboard is cleared in 10 s" in text_of(d, "status"), what="the copy confirmed")
    assert driver.execute_async_script(read_clipboard) == "copied-then-cleared-7"
    get_alarm = "chrome.alarms.get('clear clipboard', (a) => arguments[0](a || null))"
    backstop = driver.execute_async_script(get_alarm)
    assert backstop and 25_000 <= backstop["scheduledTime"] - time.time() * 1000 <= 31_000, backstop
    # Cleared by the 10 s timer within 25 s, before the 30 s alarm behind it, which the timer then cancelled.
    WebDriverWait(driver, 25, poll_frequency=0.25).until(
        lambda d: d.execute_async_script(read_clipboard) == "", "the clipboard cleared")
    assert time.monotonic() - copied_at < 30 and driver.execute_async_script(get_alarm) is None


def test_window_imports_bitwarden_and_keepassxc_exports(keychain_browser, second_site, tmp_path):
    """The window's import takes the two exports `sesame keychain import --bitwarden | --keepassxc` reads (the same
    test files and library calls), reports what it added, and refuses an encrypted Bitwarden export, and one with a
    passkey whose key is not P-256, with their reasons and nothing written. The Bitwarden export's two passkeys then
    sign in on the Flask site (py_webauthn verifies), which knows them by the public keys Python derives from the
    export."""
    from browser_keychain_fixtures import bitwarden_passkeys
    from test_keychain_cli import BITWARDEN_EXPORT, KEEPASSXC_EXPORT, bitwarden_export_with_passkey
    from selenium.webdriver.support.ui import Select
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view"), what="the list")
    driver.find_element(By.CSS_SELECTOR, "#transfer summary").click()

    Select(find(driver, "import-format")).select_by_value("bitwarden")
    ed25519 = tmp_path / "ed25519.json"
    ed25519.write_bytes(bitwarden_export_with_passkey(keyAlgorithm="EdDSA", keyCurve="Ed25519"))
    driver.find_element(By.ID, "import-file").send_keys(str(ed25519))
    wait(driver, lambda d: "passkey in that Bitwarden export is not ECDSA P-256" in text_of(d, "status-text"),
         what="the export with an Ed25519 passkey refused")
    assert vault.items() == []
    driver.find_element(By.ID, "import-file").send_keys(str(BITWARDEN_EXPORT))
    # What the CLI reports for the same file: a card and a note not kept, two logins that do not read.
    wait(driver, lambda d: text_of(d, "status-text") == "Imported 2 passwords, 2 passkeys, 2 code generators; "
         "0 already here; 2 of kinds the keychain does not keep; 2 could not be read.",
         what="the Bitwarden import's report")
    assert sorted(i["kind"] for i in vault.items()) == ["code", "code", "passkey", "passkey", "password", "password"]

    before = sorted(json.dumps(i, sort_keys=True) for i in vault.items())
    encrypted = tmp_path / "encrypted.json"
    encrypted.write_text('{"encrypted": true, "passwordProtected": true, "data": "AAAA"}')
    driver.find_element(By.ID, "import-file").send_keys(str(encrypted))
    wait(driver, lambda d: "That Bitwarden export is encrypted" in text_of(d, "status-text"),
         what="the encrypted export refused")
    assert sorted(json.dumps(i, sort_keys=True) for i in vault.items()) == before

    Select(find(driver, "import-format")).select_by_value("keepassxc")
    driver.find_element(By.ID, "import-file").send_keys(str(KEEPASSXC_EXPORT))
    # The CLI's count for this file after the Bitwarden one: one new password, three already here.
    wait(driver, lambda d: text_of(d, "status-text").startswith(
        "Imported 1 passwords, 0 passkeys, 0 code generators; 3 already here"), what="the KeePassXC import's report")
    assert sorted(i["kind"] for i in vault.items()) == [
        "code", "code", "passkey", "passkey", "password", "password", "password"]

    # The imported passkeys sign in on the site, chosen in the keychain's prompt (the first account has the focus;
    # Tab moves to the second).
    for passkey in bitwarden_passkeys(BITWARDEN_EXPORT):
        second_site.knows(passkey["credential_id"], passkey["username"], passkey["public_key"])
    status = lambda d: d.find_element(By.ID, "status").text  # noqa: E731
    signed_in_as = []
    for keys in ([Keys.ENTER], [Keys.TAB, Keys.ENTER]):
        driver.get(second_site.origin + "/")
        find(driver, "signin").click()
        wait_prompt(driver)
        press(driver, *keys)
        wait(driver, lambda d: status(d).startswith("signed in as "), what="sign-in with an imported passkey")
        signed_in_as.append(status(driver).removeprefix("signed in as "))
    assert sorted(signed_in_as) == ["lin", "max"]
    assert [v[0] for v in second_site.verified] == ["authentication", "authentication"]


def test_window_imports_and_exports_cxf(keychain_browser, second_site, sesame_bin, tmp_path):
    from test_keychain_cli import Vault
    driver, vault = keychain_browser.driver, keychain_browser.vault
    # A CXF file from another keychain, written by the CLI.
    other = Vault(sesame_bin, tmp_path / "other")
    other.init(name="other")
    other.add_password("imported.example", "ivy", "imported-password-5")
    other.add_code(f"otpauth://totp/imported.example:ivy?secret={TOTP_SECRET}&issuer=imported.example")
    other.ok("export", "--cxf", tmp_path / "in.cxf", passphrase="correct horse battery staple")

    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view"), what="the list")
    driver.find_element(By.CSS_SELECTOR, "#transfer summary").click()
    driver.find_element(By.ID, "import-file").send_keys(str(tmp_path / "in.cxf"))
    wait(driver, lambda d: "Imported 1 passwords, 0 passkeys, 1 code generators; 0 already here."
         == text_of(d, "status-text"), what="the import's report")
    wait(driver, lambda d: "Password: imported.example, ivy" in window_items(d, "other-items"), what="the list")
    assert sorted(i["kind"] for i in vault.items()) == ["code", "password"]
    # The same file again: already here.
    driver.find_element(By.ID, "import-file").send_keys(str(tmp_path / "in.cxf"))
    wait(driver, lambda d: "0 passwords, 0 passkeys, 0 code generators; 2 already here" in text_of(d, "status-text"),
         what="the duplicates counted")

    # Export: a download the CLI imports into a fresh keychain, every item there.
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    find(driver, "export").click()
    wait(driver, lambda d: "holds secrets in clear" in text_of(d, "status-text"), what="the export")

    wait(driver, lambda d: exported_cxf(downloads), what="the exported file")
    fresh = Vault(sesame_bin, tmp_path / "fresh")
    fresh.init(name="fresh")
    fresh.ok("import", "--cxf", exported_cxf(downloads))
    assert sorted(i["kind"] for i in fresh.items()) == ["code", "password"]


def test_window_syncs_and_approves_a_device(sesame_bin, second_site, tmp_path):
    """A vault with a sync folder (install-browser passes it to the host): the window lists the devices, syncs
    what another device pushed, lets a third device in with the code it shows, which then holds the items, and
    refuses a fourth, whose join then ends."""
    from test_keychain_cli import PASSPHRASE, Vault, error_code
    a, b = two_synced_devices(sesame_bin, tmp_path, first="laptop", second="phone")
    sync = tmp_path / "sync"
    b.add_password(second_site.rp_id, "lin", "from-the-phone-1")
    b.ok("sync")

    browser = KeychainBrowser(sesame_bin, tmp_path, vault=a)
    try:
        driver = browser.driver
        driver.get(second_site.origin + "/")
        open_window(driver, second_site.origin)
        wait(driver, lambda d: visible(d, "list-view"), what="the list")
        assert window_items(driver, "site-items") == []
        driver.find_element(By.CSS_SELECTOR, "#sync summary").click()
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#devices li")) == 2, what="the devices")
        devices = [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#devices li")]
        assert any(t.startswith("laptop (this device), key ") for t in devices), devices
        assert any(t.startswith("phone, key ") for t in devices), devices

        # Sync now: the phone's password arrives and shows for the site, and the last sync is now.
        before = a.status()["lastSynced"]
        find(driver, "sync-now").click()
        wait(driver, lambda d: text_of(d, "status-text").startswith("Synced: vault version")
             and window_items(d, "site-items") == [f"Password: {second_site.rp_id}, lin"], what="the sync")
        assert "1 received" in text_of(driver, "status-text")
        after = a.status()["lastSynced"]
        assert after and after != before, (before, after)
        wait(driver, lambda d: f"Last synced {time.strftime('%Y-%m-%d %H:%M')}" in text_of(d, "sync-state")
             or f"Last synced {time.strftime('%Y-%m-%d %H:%M', time.localtime(time.time() - 60))}"
             in text_of(d, "sync-state"), what="the last sync shown")

        # A third device asks to join; the window approves it with the code it shows.
        c = Vault(sesame_bin, tmp_path / "c", sync=sync)
        shown = ask_to_join(c, "C")
        find(driver, "pairing-code").send_keys("00000-00000-00000-00000")
        find(driver, "approve").click()
        wait(driver, lambda d: "No device waiting to join shows that code" in text_of(d, "status-text")
             or "not a device's code" in text_of(d, "status-text"), what="a wrong code refused")
        code_field = find(driver, "pairing-code")
        code_field.clear()
        code_field.send_keys(shown)
        name = find(driver, "device-name")
        name.clear()
        name.send_keys("tablet")
        find(driver, "approve").click()
        wait(driver, lambda d: text_of(d, "status-text").startswith("Approved tablet")
             and len(d.find_elements(By.CSS_SELECTOR, "#devices li")) == 3, what="the approval")
        assert "Joined: 1 items" in c.ok("join", passphrase=PASSPHRASE)

        # A fourth device asks to join and is refused: the waiting list (refreshed by Sync now) shows the start of
        # the code it shows; Refuse ends its join, and its next try says so.
        fourth = Vault(sesame_bin, tmp_path / "d", sync=sync)
        d_code = ask_to_join(fourth, "D")
        find(driver, "sync-now").click()
        refuse = f"#waiting button[data-code-start='{d_code[:14]}']"
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, refuse), what="the waiting device")
        assert text_of(driver, "waiting").startswith(f"A device showing {d_code[:14]}…")
        driver.find_element(By.CSS_SELECTOR, refuse).click()
        wait(driver, lambda d: text_of(d, "status-text").startswith(f"Refused the device showing {d_code[:14]}")
             and text_of(d, "waiting") == "No device is waiting.", what="the refusal")
        refused = fourth.run("join", passphrase=PASSPHRASE)
        assert refused.returncode == 1 and error_code(refused) == "joinRefused", refused.stderr
        assert len(driver.find_elements(By.CSS_SELECTOR, "#devices li")) == 3

        # Removing it again: two presses (the first asks), then it is out of the list and can no longer sync.
        remove = driver.find_element(By.CSS_SELECTOR, "#devices button[aria-label='Remove tablet']")
        remove.click()
        wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#devices li:nth-child(3) button").text
             == "Remove it for good?", what="the removal asked")
        driver.find_element(By.CSS_SELECTOR, "#devices li:nth-child(3) button").click()
        wait(driver, lambda d: text_of(d, "status-text") == "Removed tablet; the vault key rotated."
             and len(d.find_elements(By.CSS_SELECTOR, "#devices li")) == 2, what="the removal")
        c.ok("unlock", passphrase=PASSPHRASE)
        assert "deviceRemoved" in c.run("sync").stderr
    finally:
        browser.stop()


def test_window_locks_after_the_idle_time_and_shows_it(sesame_bin, second_site, tmp_path):
    """The idle lock, in the window: a host installed with `--idle 4` ends the session the window started once it
    has gone unused for 4 s; the open window then shows the unlock form (it asks when the session would end), and
    the vault is locked for the CLI too."""
    browser = KeychainBrowser(sesame_bin, tmp_path, idle=4)
    try:
        driver, vault = browser.driver, browser.vault
        vault.add_password(second_site.rp_id, "lin", "locked-away-8")
        vault.ok("lock")
        driver.get(second_site.origin + "/")
        open_window(driver, second_site.origin)
        wait(driver, lambda d: visible(d, "unlock-view"), what="the unlock form")
        press(driver, "correct horse battery staple", Keys.ENTER)
        wait(driver, lambda d: visible(d, "list-view") and window_items(d, "site-items"), what="the list")
        find(driver, "site-items").find_element(By.TAG_NAME, "button").click()
        wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin", what="the item")
        find(driver, "toggle-password").click()
        wait(driver, lambda d: text_of(d, "password-value") == "locked-away-8", what="the password shown")
        assert vault.ok("list")  # unlocked, for the CLI too (a use, which moves the end on)
        used = time.monotonic()

        WebDriverWait(driver, 20, poll_frequency=0.2).until(
            lambda d: visible(d, "unlock-view"), "the window locked after its idle time")
        assert time.monotonic() - used >= 3.5, "locked before the idle time"
        assert text_of(driver, "unlock-error") == "The keychain locked itself after it went unused."
        assert "locked-away-8" not in driver.find_element(By.TAG_NAME, "main").get_attribute("innerText")
        assert driver.execute_script("return document.getElementById('password-value').textContent") == "••••••••"
        locked = vault.run("list")  # no session: it would need the passphrase, and has no terminal to ask on
        assert locked.returncode == 2 and "passphraseUnavailable" in locked.stderr, locked.stderr
    finally:
        browser.stop()


def test_window_passes_axe_core(keychain_browser, second_site):
    """axe-core (the copy axe-selenium-python ships) finds no violation in the window's views: locked, the list
    with its sections open, an item, the edit form."""
    driver, vault = keychain_browser.driver, keychain_browser.vault
    vault.add_password(second_site.rp_id, "lin", "kitten-orbit-velvet-42", "--notes", "a note")
    source = axe_core_source()
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)

    def violations(view):
        driver.execute_script(source)
        found = driver.execute_async_script(AXE_VIOLATIONS)
        assert found == [], f"{view}: {found}"

    wait(driver, lambda d: visible(d, "list-view") and window_items(d, "site-items"), what="the list")
    for section in ("sync", "transfer"):
        driver.find_element(By.CSS_SELECTOR, f"#{section} summary").click()
    violations("the list")
    find(driver, "search").click()
    press(driver, Keys.ENTER)
    wait(driver, lambda d: visible(d, "item-view"), what="the item")
    violations("an item")
    find(driver, "edit").click()
    wait(driver, lambda d: visible(d, "edit-view"), what="the edit form")
    violations("the edit form")
    press(driver, Keys.ESCAPE)
    wait(driver, lambda d: visible(d, "item-view"), what="the item again")
    find(driver, "lock").click()
    wait(driver, lambda d: visible(d, "unlock-view"), what="the unlock form")
    violations("the unlock form")


def test_a_passkey_renamed_in_the_window_shows_renamed_at_sign_in(keychain_browser, second_site, tmp_path):
    driver, vault = keychain_browser.driver, keychain_browser.vault
    options = {"rp": {"id": second_site.rp_id, "name": "Second"}, "challenge": b64url(b"c" * 32),
               "user": {"id": b64url(b"u" * 16), "name": "lin", "displayName": "Lin"},
               "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    (tmp_path / "options.json").write_text(json.dumps(options))
    vault.ok("webauthn", "create", "--origin", second_site.origin, "--options", str(tmp_path / "options.json"))
    driver.get(second_site.origin + "/")
    site_tab = driver.current_window_handle
    open_window(driver, second_site.origin)
    wait(driver, lambda d: window_items(d, "site-items") == [
        f"Passkey: {second_site.rp_id}, lin · created {time.strftime('%Y-%m-%d', time.gmtime())}"], what="the list")
    press(driver, Keys.ENTER)
    wait(driver, lambda d: visible(d, "item-view"), what="the passkey's page")
    find(driver, "edit").click()
    wait(driver, lambda d: visible(d, "edit-view"), what="the edit form")
    for field, value in (("edit-username", "lin@work"), ("edit-display", "Lin at work")):
        element = find(driver, field)
        element.clear()
        element.send_keys(value)
    find(driver, "save").click()
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "username-value") == "lin@work", what="the rename")

    # The site's own sign-in: the keychain's account chooser shows the new name.
    driver.switch_to.window(site_tab)
    driver.get(second_site.origin + "/")
    find(driver, "signin").click()
    wait_prompt(driver)
    texts = " ".join(p["text"] for p in prompt_parts(driver))
    assert "lin@work" in texts and "Lin at work" in texts, texts
    press(driver, Keys.ESCAPE)


def test_window_new_password_fill_and_save(keychain_browser, second_site):
    """A new password from the window: the site prefilled from the tab, a generated password, and "Fill and save"
    types it into the page's sign-up form and keeps it, as `add-password` would."""
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    driver.execute_script(SIGN_UP_FORM)
    site_tab = driver.current_window_handle
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view"), what="the list")
    find(driver, "new-password").click()
    wait(driver, lambda d: visible(d, "edit-view") and "bits of entropy" in text_of(d, "strength")
         and d.switch_to.active_element.get_attribute("id") == "edit-username", what="the new password form")
    assert find(driver, "edit-site").get_attribute("value") == second_site.rp_id
    generated = find(driver, "edit-password").get_attribute("value")
    assert len(generated) == 20
    press(driver, "newbie")
    find(driver, "fill-and-save").click()
    wait(driver, lambda d: visible(d, "item-view") and text_of(d, "status-text") == "Saved and filled in the page.",
         what="the new password saved and filled")
    [saved] = vault.items()
    shown = vault.show(saved["id"], reveal=True)
    assert (shown["username"], shown["password"]) == ("newbie", generated), shown
    driver.switch_to.window(site_tab)
    assert driver.execute_script(
        "return [document.getElementById('new-user').value, document.getElementById('new-secret').value]") \
        == ["newbie", generated]


def test_window_adds_a_code_generator_from_its_link(keychain_browser, second_site):
    import pyotp
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view"), what="the list")
    driver.find_element(By.CSS_SELECTOR, "#add-code summary").click()
    find(driver, "code-uri").send_keys("otpauth://totp/Nope:lin?secret=notbase32!")
    press(driver, Keys.ENTER)
    wait(driver, lambda d: "not an otpauth:// link" in text_of(d, "status-text"), what="a bad link refused")
    uri = find(driver, "code-uri")
    uri.clear()
    uri.send_keys(f"otpauth://totp/Second:lin?secret={TOTP_SECRET}&issuer=Second")
    find(driver, "code-site").send_keys(second_site.origin + "/login")
    press(driver, Keys.ENTER)
    wait(driver, lambda d: visible(d, "item-view") and len(text_of(d, "code-value")) == 6, what="the new generator")
    now = time.time()
    assert text_of(driver, "code-value") in {pyotp.TOTP(TOTP_SECRET).at(now), pyotp.TOTP(TOTP_SECRET).at(now - 30)}
    [item] = vault.items()
    assert second_site.rp_id in json.dumps(item)


def test_window_adds_a_code_generator_from_a_qr_image(keychain_browser, second_site, sesame_bin, tmp_path):
    """`add-code --qr` in the window: an image without a QR code is refused with a message and adds nothing; a QR PNG
    made by `sesame otp new --qr` adds the generator, whose code is pyotp's for the printed secret."""
    import pyotp
    driver, vault = keychain_browser.driver, keychain_browser.vault
    driver.get(second_site.origin + "/")
    open_window(driver, second_site.origin)
    wait(driver, lambda d: visible(d, "list-view"), what="the list")
    driver.find_element(By.CSS_SELECTOR, "#add-code summary").click()
    find(driver, "code-qr").send_keys(str(png_without_qr(tmp_path / "blank.png")))
    find(driver, "add-code-button").click()
    wait(driver, lambda d: "No QR code could be read" in text_of(d, "status-text"), what="the image refused")
    assert vault.items() == []
    secret = totp_qr_png(sesame_bin, tmp_path / "code.png", "qr.example", "lin")
    find(driver, "code-qr").send_keys(str(tmp_path / "code.png"))
    find(driver, "code-site").send_keys(second_site.origin + "/login")
    find(driver, "add-code-button").click()
    wait(driver, lambda d: visible(d, "item-view") and len(text_of(d, "code-value")) == 6, what="the new generator")
    now = time.time()
    assert text_of(driver, "code-value") in {pyotp.TOTP(secret).at(now), pyotp.TOTP(secret).at(now - 30)}
    [item] = vault.items()
    assert second_site.rp_id in json.dumps(item)


# --- A page probing for items (issue 26, the second review's suspicions) -------------------------------------------


def test_a_field_focused_by_script_alone_offers_nothing(keychain_browser, second_site):
    """A page that focuses its own field from script, with no click or key press from the person, must not learn
    from the suggestion host whether the keychain holds a passkey for it; the person's click on the field offers it."""
    driver = keychain_browser.driver
    status = lambda d: d.find_element(By.ID, "status").text  # noqa: E731
    driver.get(second_site.origin + "/")
    type_into(driver, "username", "ida")
    find(driver, "register").click()
    wait_prompt(driver)
    press(driver, Keys.ENTER)
    wait(driver, lambda d: status(d) == "registered ida", what="registration")

    # A new page (its AutoFill request starts on load) that the person has not touched focuses its username field.
    driver.get(second_site.origin + "/")
    assert driver.execute_script("return navigator.userActivation.isActive") is False
    driver.execute_script("document.getElementById('username').focus()")
    assert driver.execute_script("return document.activeElement.id") == "username"
    # The keychain answers a focus within a native-host round trip (tens of milliseconds); two seconds without the
    # host is the probe's answer: nothing.
    with pytest.raises(TimeoutException):
        WebDriverWait(driver, 2, poll_frequency=0.05).until(prompt_shown)
    # The person clicks the field the page focused: the suggestions show, and sign in.
    find(driver, "username").click()
    wait_prompt(driver, "the AutoFill suggestions after the person's click")
    press(driver, Keys.ARROW_DOWN, Keys.ENTER)
    wait(driver, lambda d: status(d) == "signed in as ida", what="AutoFill sign-in")
