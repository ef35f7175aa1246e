"""The keychain's browser extension in Firefox (Debian's firefox-esr, headless, driven over Marionette): the same
unpacked MV3 extension as in Chromium, loaded as a temporary add-on, and the native host that
`sesame keychain install-browser --browser firefox` registers under $HOME/.mozilla. Firefox has no
webAuthenticationProxy, so this is the page-world override (page.js) alone; no virtual authenticator exists here.

On Sesame's own pages (`$SESAME_BIN serve`): sign-up with a passkey from the keychain, the immediate prompt declined,
then AutoFill sign-in. On the Flask + py_webauthn site (browser_keychain_fixtures.RelyingPartyApp): registration,
modal and AutoFill sign-in verified by py_webauthn, a credential indistinguishable in shape from the browser's own,
a refusal of an RP ID that is not a registrable suffix of the origin, and the prompts' clickjacking checks. The
`prf` extension on the site's sealed-notes page, against python-fido2 and across two devices synced through a real
`sesame serve`, through the same checks as in Chromium (browser_keychain_fixtures.prf_on_one_device,
prf_across_two_devices)."""

import json
import os
import pathlib
import shutil
import tempfile
import time

import pytest

from browser_keychain_fixtures import (SIGN_UP_FORM, EXTENSION, HOST_ELEMENT, TOTP_SECRET, ask_to_join, exported_cxf,  # noqa: F401
                                      AXE_VIOLATIONS, axe_core_source, png_without_qr, totp_qr_png,
                                      is_eff_words, second_site, server, two_synced_devices,
                                      devices_synced_through_serve, large_blob_written_and_read_back,
                                      prf_across_two_devices, prf_on_one_device)
from conftest import b64url, free_port


class FirefoxKeychain:
    """An unlocked vault (a new one, or `vault`), the native host installed for a fresh $HOME (`idle`: the seconds
    after which a session the window starts locks, `install-browser --idle`), and headless Firefox with the
    extension, saving downloads to `downloads` without asking."""

    def __init__(self, sesame_bin, directory, vault=None, idle=None):
        from marionette_driver.addons import Addons
        from marionette_driver.marionette import Marionette
        from test_keychain_cli import Vault

        firefox = shutil.which("firefox-esr") or shutil.which("firefox")
        if not firefox:
            pytest.fail("firefox-esr (Debian package) is required; scripts/test installs it")
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="sesame-firefox-"))
        if vault is None:
            vault = Vault(sesame_bin, directory / "keychain")
            vault.init(name="firefox")
        self.vault = vault
        installed = self.vault.ok("install-browser", "--browser", "firefox", "--extension-dir", str(EXTENSION),
                                  *(["--idle", str(idle)] if idle else []), env={"HOME": str(self.home)})
        assert f"{self.home}/.mozilla/native-messaging-hosts/" in installed
        # Firefox finds the host manifest under $HOME; Marionette starts it with this process's environment.
        saved = os.environ.get("HOME")
        os.environ["HOME"] = str(self.home)
        try:
            self.client = Marionette(host="127.0.0.1", port=free_port(), bin=firefox, headless=True,
                                     gecko_log=str(self.home / "gecko.log"))
            self.client.start_session()
        finally:
            if saved is None:
                del os.environ["HOME"]
            else:
                os.environ["HOME"] = saved
        self.client.timeout.script = 30
        self.downloads = self.home / "downloads"
        self.downloads.mkdir()
        for pref, value in (("browser.download.folderList", 2), ("browser.download.dir", str(self.downloads)),
                            ("browser.download.useDownloadDir", True),
                            ("browser.download.always_ask_before_handling_new_types", False),
                            ("browser.download.start_downloads_in_tmp_dir", False)):
            self.client.set_pref(pref, value)
        Addons(self.client).install(str(EXTENSION), temp=True)

    def stop(self):
        try:
            self.client.delete_session()
        finally:
            self.client.cleanup()
            shutil.rmtree(self.home, ignore_errors=True)

    # --- page helpers ---------------------------------------------------------------------------------------------

    def find(self, element_id):
        from marionette_driver.by import By
        return self.client.find_element(By.ID, element_id)

    def status(self):
        return self.find("status").text

    def wait(self, condition, what, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            time.sleep(0.1)
        try:
            seen = self.client.execute_script(
                "const s = document.getElementById('status') || document.getElementById('message');"
                "return [location.href, s ? s.textContent : null]")
        except Exception as error:  # noqa: BLE001 (the page may be gone; the timeout is what to report)
            seen = repr(error)
        pytest.fail(f"timed out waiting for {what}; page and message: {seen!r}")

    def prompt_shown(self):
        return self.client.execute_script(f"return !!document.querySelector('{HOST_ELEMENT}')")

    def prompt_part(self, selector, script="return part ? part.getAttribute('data-armed') : null"):
        """Runs `script` on the element matching `selector` inside the prompt's closed shadow root (as `part`), from
        Marionette's privileged sandbox, where openOrClosedShadowRoot reaches it; the page cannot."""
        return self.client.execute_script(f"""
          const host = document.querySelector('{HOST_ELEMENT}');
          const root = host && host.openOrClosedShadowRoot;
          const part = root ? root.querySelector(arguments[0]) : null;
          {script}""", script_args=[selector], sandbox="system")

    def prompt_armed(self):
        """Whether the prompt accepts input (shown, unobscured and unmoved for the settle time): relay.js marks its
        sheet or list data-armed."""
        return self.prompt_part(".sheet, .list") == "true"

    def wait_prompt(self, what):
        """Waits until the prompt shows and accepts input (before the settle time it ignores clicks and keys)."""
        self.wait(self.prompt_shown, what)
        deadline = time.time() + 20
        while time.time() < deadline and not self.prompt_armed():
            time.sleep(0.1)
        if not self.prompt_armed():
            in_the_way = self.prompt_part(".sheet, .list", "return part && part.getAttribute('data-obstruction')")
            pytest.fail(f"{what} never accepted input; in the way: {in_the_way!r}")

    def prompt_text(self):
        """The text of the prompt's sheet or list (inside its closed shadow root)."""
        return self.prompt_part(".sheet, .list", "return part ? part.textContent : null")

    def in_page(self, script, *args):
        """Runs an asynchronous script in the page's own world (Marionette's default sandbox sees the browser's
        native objects through Xray wrappers, not what page scripts, the extension's page.js included, defined)."""
        return self.client.execute_async_script(script, script_args=list(args), sandbox=None)

    # --- the toolbar window ---------------------------------------------------------------------------------------

    def open_window(self, site_origin):
        """The window (popup.html) in a tab of its own, for the tab showing `site_origin` (`popup.html?tab=ID`)."""
        client = self.client
        with client.using_context("chrome"):
            host = client.execute_script(
                "return WebExtensionPolicy.getByID('keychain@sesame.invalid').mozExtensionHostname")
        window = f"moz-extension://{host}/popup.html"
        client.switch_to_window(client.open(type="tab", focus=True)["handle"])
        client.navigate(window)
        tabs = client.execute_async_script(
            "const done = arguments[0]; browser.tabs.query({}).then((tabs) => done(tabs.map((t) => [t.id, t.url])))",
            sandbox=None)
        client.navigate(f"{window}?tab={[i for i, url in tabs if url.startswith(site_origin)][0]}")

    def shown(self, element_id):
        return self.client.execute_script(
            "const e = document.getElementById(arguments[0]); return !!e && !e.closest('[hidden]')",
            script_args=[element_id])

    def text(self, element_id):
        return self.find(element_id).text

    def labels(self, list_id):
        return self.client.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((b) => b.getAttribute('aria-label'))",
            script_args=[f"#{list_id} button"])

    def clipboard(self):
        """The system clipboard's text, read from the browser's chrome context (no page can read it without a
        permission the extension does not hold); "" when it holds no text."""
        with self.client.using_context("chrome"):
            return self.client.execute_script("""
              const t = Cc["@mozilla.org/widget/transferable;1"].createInstance(Ci.nsITransferable);
              t.init(null);
              t.addDataFlavor("text/plain");
              Services.clipboard.getData(t, Ci.nsIClipboard.kGlobalClipboard);
              const data = {};
              try { t.getTransferData("text/plain", data); } catch { return ""; }
              return data.value ? data.value.QueryInterface(Ci.nsISupportsString).data : "";""")

    def focused(self):
        return self.client.execute_script("return document.activeElement && document.activeElement.id")

    def value(self, element_id):
        return self.find(element_id).get_property("value")

    def replace(self, element_id, text):
        field = self.find(element_id)
        field.clear()
        field.send_keys(text)

    def open_item(self, list_id, label_start):
        self.client.execute_script(
            "[...document.querySelectorAll(arguments[0])].find((b) => b.ariaLabel.startsWith(arguments[1])).click()",
            script_args=[f"#{list_id} button", label_start])

    def press(self, *keys):
        sequence = self.client.actions.sequence("key", "keyboard")
        for key in keys:
            sequence = sequence.key_down(key).key_up(key)
        sequence.perform()


@pytest.fixture
def firefox(sesame_bin, tmp_path):
    running = FirefoxKeychain(sesame_bin, tmp_path)
    yield running
    running.stop()


def test_firefox_registers_and_signs_in_on_another_site_with_py_webauthn(firefox, second_site):
    from marionette_driver.keys import Keys
    client = firefox.client
    client.navigate(second_site.origin + "/")
    firefox.find("username").send_keys("lin")
    firefox.find("register").click()
    firefox.wait_prompt("the keychain's prompt to save a passkey")
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: firefox.status() == "registered lin", "registration")
    assert second_site.verified == [("registration", "lin", True)]
    assert any("second.localhost" in json.dumps(item) for item in firefox.vault.items())

    # Modal sign-in.
    client.navigate(second_site.origin + "/")
    firefox.find("signin").click()
    firefox.wait_prompt("the modal sign-in prompt")
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: firefox.status() == "signed in as lin", "modal sign-in")

    # AutoFill: focus the username field, pick the passkey from the suggestions.
    client.navigate(second_site.origin + "/")
    firefox.find("username").click()
    firefox.wait_prompt("the AutoFill suggestions")
    firefox.press(Keys.ARROW_DOWN, Keys.ENTER)
    firefox.wait(lambda: firefox.status() == "signed in as lin", "AutoFill sign-in")
    assert [v[0] for v in second_site.verified] == ["registration", "authentication", "authentication"]

    # What the page got has the shape of Firefox's own credentials, seen by a script of the page itself (Marionette's
    # own scripts, even unsandboxed, see another realm's ArrayBuffer).
    client.execute_script("""
      const script = document.createElement("script");
      script.textContent = `(async () => {
        const options = await (await fetch("/signin/options", {method: "POST"})).json();
        window.conditional && window.conditional.abort();
        const c = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
        document.documentElement.dataset.shape = JSON.stringify({
          isPKC: c instanceof PublicKeyCredential, type: c.type, attachment: c.authenticatorAttachment,
          rawIdIsBuffer: c.rawId instanceof ArrayBuffer, idMatches: c.id === c.toJSON().id,
          response: Object.prototype.toString.call(c.response), ext: c.getClientExtensionResults(),
          get: navigator.credentials.get.toString()});
      })();`;
      document.body.appendChild(script);
    """)
    firefox.wait_prompt("the modal prompt")
    firefox.press(Keys.ENTER)
    shape = lambda: client.execute_script("return document.documentElement.dataset.shape || null")  # noqa: E731
    firefox.wait(shape, "the credential's shape")
    assert json.loads(shape()) == {
        "isPKC": True, "type": "public-key", "attachment": "platform", "rawIdIsBuffer": True, "idMatches": True,
        "response": "[object AuthenticatorAssertionResponse]", "ext": {},
        "get": "function get() {\n    [native code]\n}"}


class FirefoxPage:
    """The few page actions the shared checks of browser_keychain_fixtures (PRF, largeBlob) need, in Firefox."""

    def __init__(self, firefox):
        self.firefox = firefox

    def goto(self, url):
        self.firefox.client.navigate(url)

    def type(self, element_id, text):
        self.firefox.find(element_id).send_keys(text)

    def click(self, element_id):
        self.firefox.find(element_id).click()

    def confirm_prompt(self, what):
        from marionette_driver.keys import Keys
        self.firefox.wait_prompt(what)
        self.firefox.press(Keys.ENTER)

    def text(self, element_id):
        return self.firefox.text(element_id)

    def wait(self, condition, what):
        self.firefox.wait(condition, what)

    def script(self, script, *args):
        return self.firefox.client.execute_script(script, script_args=list(args))

    def async_script(self, script, *args):
        return self.firefox.in_page(script, *args)

    def prompt_shown(self):
        return self.firefox.prompt_shown()


def test_firefox_large_blob_written_and_read_back(firefox, second_site):
    """largeBlob in Firefox: browser_keychain_fixtures.large_blob_written_and_read_back."""
    large_blob_written_and_read_back(FirefoxPage(firefox), second_site)


def test_firefox_prf_agrees_with_python_fido2_and_opens_a_sealed_note(firefox, second_site, tmp_path):
    """PRF in Firefox on the sealed-notes site, every check of browser_keychain_fixtures.prf_on_one_device: the
    capabilities reported, python-fido2's values at registration and sign-in as ArrayBuffers of the page's realm, the
    note sealed at one ceremony and opened at the next, evalByCredential, and its refusals before any prompt."""
    prf_on_one_device(FirefoxPage(firefox), second_site, firefox.vault, tmp_path)


def test_firefox_prf_agrees_across_two_devices_synced_through_sesame_serve(sesame_bin, tmp_path, second_site,
                                                                           devices_synced_through_serve):
    """PRF across devices in Firefox: two keychain devices of one account of a real `sesame serve`, each with its own
    Firefox; every check of browser_keychain_fixtures.prf_across_two_devices."""
    from contextlib import contextmanager
    a, b = devices_synced_through_serve

    @contextmanager
    def open_page(vault):
        running = FirefoxKeychain(sesame_bin, tmp_path, vault=vault)
        try:
            yield FirefoxPage(running)
        finally:
            running.stop()
    prf_across_two_devices(open_page, a, b, second_site, tmp_path)


def test_firefox_refuses_a_foreign_rp_id_and_another_sites_passkey(firefox, second_site, tmp_path):
    from test_browser_keychain import CALL
    # A passkey for http://localhost:8080 (RP ID localhost), made with the CLI.
    options = {"rp": {"id": "localhost", "name": "Sesame"}, "challenge": "Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2M",
               "user": {"id": "dXV1dXV1dXV1dXV1dXV1dQ", "name": "ada", "displayName": "Ada"},
               "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    (tmp_path / "options.json").write_text(json.dumps(options))
    made = json.loads(firefox.vault.ok("webauthn", "create", "--origin", "http://localhost:8080",
                                       "--options", str(tmp_path / "options.json")))
    before = firefox.vault.items()
    client = firefox.client
    client.navigate(second_site.origin + "/")
    # Not registrable suffixes of second.localhost ("localhost" is a public suffix): SecurityError, no prompt.
    for rp_id in ("localhost", "example.com", "ond.localhost"):
        answer = firefox.in_page(CALL, "create", {
            "rp": {"id": rp_id, "name": "x"}, "user": {"name": "eve", "displayName": "Eve"},
            "pubKeyCredParams": [{"type": "public-key", "alg": -7}]})
        assert answer == "SecurityError", rp_id
        assert not firefox.prompt_shown()
    # The other site's passkey: by its RP ID a SecurityError, by its ID alone nothing is found.
    assert firefox.in_page(CALL, "get", {"rpId": "localhost", "allowCredentials": [made["id"]]}) == "SecurityError"
    assert firefox.in_page(CALL, "get", {"allowCredentials": [made["id"]], "mediation": "immediate"}) \
        == "NotAllowedError"
    assert not firefox.prompt_shown()
    assert firefox.vault.items() == before


def test_firefox_prompt_resists_clickjacking_without_intersection_observer_v2(firefox, second_site):
    """Firefox has no IntersectionObserver v2: relay.js's own checks (computed style of the host and its ancestors,
    hit tests, the page's top-layer elements, the settle time) stand alone. Real clicks (Marionette's pointer
    actions are trusted input) at "Save passkey" complete nothing while the page fades or covers the prompt, or
    right after it appears; once the prompt has settled, the person's click saves the passkey."""
    from test_browser_keychain import PSEUDO_COVER, RECORD_TIMES, SETTLE, START_CREATE
    client = firefox.client
    client.navigate(second_site.origin + "/")
    outcome = lambda: client.execute_script("return window.wrappedJSObject.outcome ?? null")  # noqa: E731

    def click_save():
        x, y = firefox.prompt_part("button.primary", """
          const r = part.getBoundingClientRect();
          return [r.left + r.width / 2, r.top + r.height / 2];""")
        client.actions.sequence("pointer", "mouse", {"pointerType": "mouse"}) \
            .pointer_move(round(x), round(y)).pointer_down().pointer_up().perform()

    def assert_nothing_saved(what):
        time.sleep(1)
        assert outcome() is None, what
        assert [i for i in firefox.vault.items() if "second.localhost" in json.dumps(i)] == [], what

    # A click right after the prompt appears (where the person was about to click). The page records when the
    # prompt appeared and when the trusted click came.
    firefox.in_page(RECORD_TIMES + START_CREATE + "arguments[arguments.length - 1]();", "lin")
    while not firefox.prompt_shown():
        pass
    click_save()
    times = client.execute_script("return JSON.parse(JSON.stringify(window.wrappedJSObject.times))")
    assert times["clicked"] - times["shown"] < SETTLE * 1000, times
    assert_nothing_saved(f"a click {times['clicked'] - times['shown']:.0f} ms after the prompt appeared")

    # The root element at opacity 0 (relay.js checks the host's ancestors' computed style at every input).
    firefox.wait_prompt("the prompt")
    firefox.in_page("document.documentElement.style.opacity = '0'; arguments[0]();")
    time.sleep(SETTLE + 0.2)
    assert not firefox.prompt_armed()
    click_save()
    assert_nothing_saved("a click on the invisible prompt")
    firefox.in_page("document.documentElement.style.opacity = ''; arguments[0]();")

    # An opaque top-layer layer shown after the prompt, letting clicks through (pointer-events: none).
    firefox.wait_prompt("the prompt")
    firefox.in_page("""
      const cover = document.createElement("div");
      cover.popover = "manual";
      cover.style.cssText = "position: fixed; inset: 0; width: 100vw; height: 100vh; max-width: none; "
        + "max-height: none; margin: 0; background: #fff; pointer-events: none";
      document.body.append(cover);
      cover.showPopover();
      window.uncover = () => cover.remove();
      arguments[0]();
    """)
    time.sleep(SETTLE + 0.2)
    assert not firefox.prompt_armed()
    click_save()
    assert_nothing_saved("a click through the overlay")
    firefox.in_page("window.uncover(); arguments[0]();")

    # The host's own ::after, opaque and letting clicks through.
    firefox.wait_prompt("the prompt")
    firefox.in_page(PSEUDO_COVER + "arguments[0]();")
    time.sleep(SETTLE + 0.2)
    assert not firefox.prompt_armed()
    click_save()
    assert_nothing_saved("a click through the host's ::after")
    firefox.in_page("window.uncover(); arguments[0]();")

    # Unobscured and settled: the click saves.
    firefox.wait_prompt("the prompt")
    click_save()
    firefox.wait(lambda: (outcome() or "").startswith("credential "), "the credential")


def test_firefox_signs_up_on_sesame_then_signs_in_with_autofill(firefox, server):
    """Sesame's own pages, as test_browser_keychain.py runs them in Chromium: sign up with a passkey the keychain
    makes, sign out, decline the immediate prompt the sign-in page opens with, then AutoFill sign-in."""
    from marionette_driver.keys import Keys
    client = firefox.client

    def signed_in():
        firefox.wait(lambda: client.get_url().startswith(server.origin + "/account")
                     and client.execute_script("return document.body.dataset.ready === 'true'"), "the account page")

    def session_method():
        return firefox.in_page("""
          const done = arguments[0];
          fetch('/api/account/sessions', {credentials: 'same-origin'}).then((r) => r.json())
            .then((sessions) => done(sessions.filter((s) => s.current)[0].method));
        """)

    client.navigate(server.origin + "/signup")
    firefox.find("username").send_keys("ada")
    firefox.find("display-name").send_keys("Ada Lovelace")
    firefox.find("signup-button").click()
    firefox.wait_prompt("the save-a-passkey prompt")
    firefox.press(Keys.ENTER)  # "Save passkey" has the focus
    signed_in()
    assert "Ada Lovelace" in firefox.find("who").text
    assert len(server.passkey_lines("ada")) == 1
    made = [item for item in firefox.vault.items() if "passkey" in json.dumps(item).lower()]
    assert len(made) == 1 and "localhost" in json.dumps(made[0])

    firefox.find("sign-out").click()
    firefox.wait(lambda: client.get_url().startswith(server.origin + "/signin"), "the sign-in page")
    # The sign-in page first asks for a passkey available at once; the keychain has one and asks; Escape declines.
    firefox.wait_prompt("the prompt for the immediate request")
    firefox.press(Keys.ESCAPE)
    firefox.wait(lambda: firefox.find("username").is_displayed()
                 and "No passkey is ready" in firefox.find("message").text, "the sign-in form")
    # The page focuses its username field (a webauthn field, so AutoFill may open at once): start from nothing shown.
    client.execute_script("if (document.activeElement) document.activeElement.blur();")
    firefox.wait(lambda: not firefox.prompt_shown(), "the keychain's prompt closed")

    firefox.find("username").click()
    firefox.wait_prompt("the AutoFill suggestions")
    assert firefox.find("username").get_property("value") == ""
    firefox.press(Keys.ARROW_DOWN, Keys.ENTER)
    signed_in()
    assert session_method().startswith("passkey")
    assert "last used never" not in server.passkey_lines("ada")[0]


def test_firefox_window_unlocks_searches_and_shows_an_item(firefox, second_site):
    """The toolbar window (popup.html) in a tab of Firefox, for the tab showing the site: unlock with a wrong and
    then the right passphrase, the site's items first, a search, a password shown and hidden, a code, lock now."""
    from marionette_driver.by import By
    from marionette_driver.keys import Keys
    client, vault = firefox.client, firefox.vault
    vault.add_password(second_site.rp_id, "lin", "kitten-orbit-velvet-42")
    vault.add_password("example.org", "bob", "unrelated-password-9", "--notes", "the team's")
    vault.add_code("otpauth://totp/Second:lin?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Second",
                   "--site", second_site.rp_id)
    vault.ok("lock")
    client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    shown, text, labels = firefox.shown, firefox.text, firefox.labels
    firefox.wait(lambda: shown("unlock-view"), "the unlock form")
    firefox.find("passphrase").send_keys("not the passphrase")
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: "does not open" in text("unlock-error"), "the wrong passphrase refused")
    firefox.find("passphrase").send_keys("correct horse battery staple")
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: shown("list-view") and len(labels("site-items")) == 2, "the list after unlocking")
    assert text("site-heading") == f"This site: {second_site.rp_id}"
    assert labels("other-items") == ["Password: example.org, bob"]

    firefox.find("search").send_keys("team")
    firefox.wait(lambda: labels("site-items") == [] and labels("other-items") == ["Password: example.org, bob"],
                 "a search over notes")
    firefox.press(Keys.ESCAPE)
    firefox.wait(lambda: len(labels("site-items")) == 2, "the search cleared")

    client.execute_script(
        "[...document.querySelectorAll('#site-items button')].find((b) => b.ariaLabel.startsWith('Password')).click()")
    firefox.wait(lambda: shown("item-view") and text("username-value") == "lin", "the password's page")
    assert text("password-value") == "••••••••"
    firefox.find("toggle-password").click()
    firefox.wait(lambda: text("password-value") == "kitten-orbit-velvet-42", "the password shown")
    firefox.press(Keys.ESCAPE)
    firefox.wait(lambda: shown("list-view"), "the list again")
    client.execute_script(
        "[...document.querySelectorAll('#site-items button')].find((b) => b.ariaLabel.startsWith('Code')).click()")
    firefox.wait(lambda: shown("item-view") and len(text("code-value")) == 6 and "changes in" in text("code-countdown"),
                 "the code and its countdown")

    client.find_element(By.ID, "lock").click()
    firefox.wait(lambda: shown("unlock-view"), "the unlock form after locking")
    assert vault.run("list").returncode != 0


def test_firefox_window_copies_and_the_clipboard_is_cleared_after_the_setting(firefox, second_site):
    """Copying a password in the window puts it on Firefox's clipboard; the background page clears it after the time
    chosen in Settings (10 s here, kept in extension storage)."""
    from marionette_driver.by import By
    client, vault = firefox.client, firefox.vault
    vault.add_password(second_site.rp_id, "lin", "firefox-copied-then-cleared-3")
    client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.shown("list-view") and len(firefox.labels("site-items")) == 1, "the unlocked list")
    assert client.execute_script("return document.getElementById('clear-seconds').value") == "30"
    client.find_element(By.CSS_SELECTOR, "#settings summary").click()
    client.find_element(By.CSS_SELECTOR, "#clear-seconds option[value='10']").click()
    firefox.wait(lambda: "after 10 seconds" in firefox.text("status-text"), "the setting stored")
    stored = client.execute_async_script(
        "const done = arguments[0]; browser.storage.local.get('clipboardClearSeconds').then((s) => done(s))",
        sandbox=None)
    assert stored == {"clipboardClearSeconds": 10}, stored

    client.execute_script("document.querySelector('#site-items button').click()")
    firefox.wait(lambda: firefox.shown("item-view") and firefox.text("username-value") == "lin", "the password's page")
    firefox.find("copy-password").click()
    firefox.wait(lambda: "clipboard is cleared in 10 s" in firefox.text("status-text"), "the copy confirmed")
    assert firefox.clipboard() == "firefox-copied-then-cleared-3"
    firefox.wait(lambda: firefox.clipboard() == "", "the clipboard cleared", timeout=25)


def test_firefox_window_shows_a_code_and_its_countdown_rolling_over(firefox, second_site):
    """A code generator's page in the window: the code pyotp computes for now, its countdown, and the next code once
    the countdown runs out (within one period and a bit)."""
    import pyotp
    firefox.vault.add_code(f"otpauth://totp/Second:lin?secret={TOTP_SECRET}&issuer=Second", "--site",
                           second_site.rp_id)
    firefox.client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.labels("site-items") == [f"Code: {second_site.rp_id}, Second, lin"], "the list")
    firefox.open_item("site-items", "Code:")
    text = firefox.text
    firefox.wait(lambda: len(text("code-value")) == 6 and "changes in" in text("code-countdown"),
                 "the code and its countdown")
    totp, first = pyotp.TOTP(TOTP_SECRET), text("code-value")
    assert first in {totp.at(time.time()), totp.at(time.time() - 30)}
    assert 0 <= int(text("code-countdown").split()[2]) <= 30
    firefox.wait(lambda: text("code-value") not in ("", first), "the next code after the countdown", timeout=40)
    assert text("code-value") in {totp.at(time.time()), totp.at(time.time() - 30)}


def test_firefox_window_adds_a_code_generator_from_a_qr_image(firefox, second_site, sesame_bin, tmp_path):
    """As in Chromium: an image without a QR code refused with a message, nothing added; a QR PNG from
    `sesame otp new --qr` adds the generator, its code pyotp's for the printed secret."""
    import pyotp
    firefox.client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.shown("list-view"), "the list")
    firefox.client.execute_script("document.querySelector('#add-code summary').click()")
    firefox.find("code-qr").send_keys(str(png_without_qr(tmp_path / "blank.png")))
    firefox.find("add-code-button").click()
    firefox.wait(lambda: "No QR code could be read" in firefox.text("status-text"), "the image refused")
    assert firefox.vault.items() == []
    secret = totp_qr_png(sesame_bin, tmp_path / "code.png", "qr.example", "lin")
    firefox.find("code-qr").send_keys(str(tmp_path / "code.png"))
    firefox.find("code-site").send_keys(second_site.origin + "/login")
    firefox.find("add-code-button").click()
    firefox.wait(lambda: firefox.shown("item-view") and len(firefox.text("code-value")) == 6, "the new generator")
    now = time.time()
    assert firefox.text("code-value") in {pyotp.TOTP(secret).at(now), pyotp.TOTP(secret).at(now - 30)}
    [item] = firefox.vault.items()
    assert second_site.rp_id in json.dumps(item)


def test_firefox_window_edits_with_the_generator_deletes_and_undoes(firefox, second_site):
    """Edit in the window: a new user name, generated words from the EFF list and then characters (strength in
    bits), new notes, saved as the CLI sees them; delete, then Undo from the keyboard brings it back under its ID."""
    from marionette_driver.keys import Keys
    vault, shown, text, value = firefox.vault, firefox.shown, firefox.text, firefox.value
    item_id = vault.add_password(second_site.rp_id, "lin", "old-password-1", "--notes", "first note")
    firefox.client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.labels("site-items") == [f"Password: {second_site.rp_id}, lin"], "the list")
    firefox.open_item("site-items", "Password:")
    firefox.wait(lambda: shown("item-view") and text("username-value") == "lin", "the item")

    firefox.find("edit").click()
    firefox.wait(lambda: shown("edit-view") and firefox.focused() == "edit-username", "the edit form")
    firefox.replace("edit-username", "lin2")
    firefox.find("gen-mode-words").click()
    firefox.wait(lambda: shown("gen-word-count") and "words from the EFF long word list" in text("strength"),
                 "a generated passphrase")
    assert text("strength") == ("About 77 bits of entropy (6 words from the EFF long word list (CC BY 3.0), "
                                "7,776 words).")
    assert is_eff_words(value("edit-password"), 6), value("edit-password")
    firefox.replace("gen-word-count", "4")
    firefox.find("generate").click()
    firefox.wait(lambda: text("strength").startswith("About 51 bits of entropy (4 words"), "4 words")
    assert is_eff_words(value("edit-password"), 4), value("edit-password")
    firefox.find("gen-mode-characters").click()
    firefox.wait(lambda: not shown("gen-word-count") and "characters from" in text("strength"), "characters again")
    firefox.find("generate").click()
    firefox.wait(lambda: len(value("edit-password")) == 20, "a generated password")
    generated = value("edit-password")
    assert text("strength") == "About 122 bits of entropy (20 characters from 71)."
    firefox.replace("edit-notes", "changed in the window")
    firefox.find("save").click()
    firefox.wait(lambda: shown("item-view") and text("username-value") == "lin2" and "Saved" in text("status-text"),
                 "the saved item")
    saved = vault.show(item_id, reveal=True)
    assert (saved["username"], saved["password"], saved["notes"]) == ("lin2", generated, "changed in the window")

    firefox.find("delete").click()
    firefox.wait(lambda: shown("list-view") and "Deleted" in text("status-text") and firefox.focused() == "undo",
                 "the deletion with its undo")
    assert vault.items() == []
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: "Restored" in text("status-text")
                 and firefox.labels("site-items") == [f"Password: {second_site.rp_id}, lin2"], "the undone deletion")
    assert [item["id"] for item in vault.items()] == [item_id]
    assert vault.show(item_id, reveal=True)["password"] == generated


def test_firefox_window_new_password_fill_and_save(firefox, second_site):
    """A new password from the window: the site prefilled from the tab, a generated password, and "Fill and save"
    types it into the page's sign-up form (in the site's tab) and keeps it."""
    client, vault = firefox.client, firefox.vault
    client.navigate(second_site.origin + "/")
    client.execute_script(SIGN_UP_FORM)
    site_tab = client.current_window_handle
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.shown("list-view"), "the list")
    firefox.find("new-password").click()
    firefox.wait(lambda: firefox.shown("edit-view") and "bits of entropy" in firefox.text("strength")
                 and firefox.focused() == "edit-username", "the new password form")
    assert firefox.value("edit-site") == second_site.rp_id
    generated = firefox.value("edit-password")
    assert len(generated) == 20
    firefox.find("edit-username").send_keys("newbie")
    firefox.find("fill-and-save").click()
    firefox.wait(lambda: firefox.shown("item-view") and firefox.text("status-text") == "Saved and filled in the page.",
                 "the new password saved and filled")
    [saved] = vault.items()
    shown = vault.show(saved["id"], reveal=True)
    assert (shown["username"], shown["password"]) == ("newbie", generated), shown
    client.switch_to_window(site_tab)
    assert client.execute_script(
        "return [document.getElementById('new-user').value, document.getElementById('new-secret').value]") \
        == ["newbie", generated]


def test_firefox_window_imports_bitwarden_keepassxc_and_cxf_and_exports_cxf(firefox, second_site, sesame_bin,
                                                                              tmp_path):
    """Import in the window from the three exports the CLI reads (the same test files), a refused one changing
    nothing; the Bitwarden export's passkeys then sign in on the Flask site; export downloads a CXF file the CLI
    imports into a fresh keychain, every item there."""
    from marionette_driver.keys import Keys
    from browser_keychain_fixtures import bitwarden_passkeys
    from test_keychain_cli import BITWARDEN_EXPORT, KEEPASSXC_EXPORT, Vault, bitwarden_export_with_passkey
    client, vault, text = firefox.client, firefox.vault, firefox.text
    client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)
    window = client.current_window_handle
    firefox.wait(lambda: firefox.shown("list-view"), "the list")
    client.find_element("css selector", "#transfer summary").click()

    def choose(format_):
        client.find_element("css selector", f"#import-format option[value='{format_}']").click()

    def import_file(path):
        firefox.find("import-file").send_keys(str(path))

    choose("bitwarden")
    p384 = tmp_path / "p384.json"
    p384.write_bytes(bitwarden_export_with_passkey(keyCurve="P-384"))
    import_file(p384)
    firefox.wait(lambda: "passkey in that Bitwarden export is not ECDSA P-256" in text("status-text"),
                 "the export with a P-384 passkey refused")
    assert vault.items() == []
    import_file(BITWARDEN_EXPORT)
    firefox.wait(lambda: text("status-text") == "Imported 2 passwords, 2 passkeys, 2 code generators; 0 already "
                 "here; 2 of kinds the keychain does not keep; 2 could not be read.", "the Bitwarden import's report")
    choose("keepassxc")
    import_file(KEEPASSXC_EXPORT)
    firefox.wait(lambda: text("status-text").startswith(
        "Imported 1 passwords, 0 passkeys, 0 code generators; 3 already here"), "the KeePassXC import's report")

    other = Vault(sesame_bin, tmp_path / "other")
    other.init(name="other")
    other.add_password("imported.example", "ivy", "imported-password-5")
    other.ok("export", "--cxf", tmp_path / "in.cxf", passphrase="correct horse battery staple")
    choose("cxf")
    import_file(tmp_path / "in.cxf")
    firefox.wait(lambda: text("status-text") == "Imported 1 passwords, 0 passkeys, 0 code generators; 0 already "
                 "here.", "the CXF import's report")
    kinds = ["code", "code", "passkey", "passkey", "password", "password", "password", "password"]
    assert sorted(i["kind"] for i in vault.items()) == kinds

    # Export: the download, read back by the CLI.
    firefox.find("export").click()
    firefox.wait(lambda: "holds secrets in clear" in text("status-text"), "the export")
    firefox.wait(lambda: exported_cxf(firefox.downloads), "the exported file")
    fresh = Vault(sesame_bin, tmp_path / "fresh")
    fresh.init(name="fresh")
    fresh.ok("import", "--cxf", exported_cxf(firefox.downloads))
    assert sorted(i["kind"] for i in fresh.items()) == kinds

    # The imported passkeys sign in on the site, chosen in the keychain's prompt.
    for passkey in bitwarden_passkeys(BITWARDEN_EXPORT):
        second_site.knows(passkey["credential_id"], passkey["username"], passkey["public_key"])
    client.switch_to_window(window)
    signed_in_as = []
    for keys in ([Keys.ENTER], [Keys.TAB, Keys.ENTER]):
        client.navigate(second_site.origin + "/")
        firefox.find("signin").click()
        firefox.wait_prompt("the modal sign-in prompt")
        firefox.press(*keys)
        firefox.wait(lambda: firefox.status().startswith("signed in as "), "sign-in with an imported passkey")
        signed_in_as.append(firefox.status().removeprefix("signed in as "))
    assert sorted(signed_in_as) == ["lin", "max"]


def test_firefox_window_syncs_approves_and_refuses_devices(sesame_bin, second_site, tmp_path):
    """A vault with a sync folder: the window lists the devices, syncs what another device pushed, approves a third
    device by the code it shows (after refusing a wrong code), which then holds the items, and refuses a fourth,
    whose join then ends."""
    from test_keychain_cli import PASSPHRASE, Vault, error_code
    a, b = two_synced_devices(sesame_bin, tmp_path, first="laptop", second="phone")
    sync = tmp_path / "sync"
    b.add_password(second_site.rp_id, "lin", "from-the-phone-1")
    b.ok("sync")

    firefox = FirefoxKeychain(sesame_bin, tmp_path, vault=a)
    try:
        client, text = firefox.client, firefox.text
        devices = lambda: client.execute_script(  # noqa: E731
            "return [...document.querySelectorAll('#devices li')].map((li) => li.textContent)")
        client.navigate(second_site.origin + "/")
        firefox.open_window(second_site.origin)
        firefox.wait(lambda: firefox.shown("list-view"), "the list")
        assert firefox.labels("site-items") == []
        client.find_element("css selector", "#sync summary").click()
        firefox.wait(lambda: len(devices()) == 2, "the devices")
        assert any(t.startswith("laptop (this device), key ") for t in devices()), devices()
        assert any(t.startswith("phone, key ") for t in devices()), devices()

        firefox.find("sync-now").click()
        firefox.wait(lambda: text("status-text").startswith("Synced: vault version")
                     and firefox.labels("site-items") == [f"Password: {second_site.rp_id}, lin"], "the sync")
        assert "1 received" in text("status-text")

        c = Vault(sesame_bin, tmp_path / "c", sync=sync)
        shown = ask_to_join(c, "C")
        firefox.find("pairing-code").send_keys("00000-00000-00000-00000")
        firefox.find("approve").click()
        firefox.wait(lambda: "No device waiting to join shows that code" in text("status-text")
                     or "not a device's code" in text("status-text"), "a wrong code refused")
        firefox.replace("pairing-code", shown)
        firefox.replace("device-name", "tablet")
        firefox.find("approve").click()
        firefox.wait(lambda: text("status-text").startswith("Approved tablet") and len(devices()) == 3,
                     "the approval")
        assert "Joined: 1 items" in c.ok("join", passphrase=PASSPHRASE)

        fourth = Vault(sesame_bin, tmp_path / "d", sync=sync)
        d_code = ask_to_join(fourth, "D")
        firefox.find("sync-now").click()
        refuse = f"#waiting button[data-code-start='{d_code[:14]}']"
        firefox.wait(lambda: client.find_elements("css selector", refuse), "the waiting device")
        assert text("waiting").startswith(f"A device showing {d_code[:14]}…")
        client.find_element("css selector", refuse).click()
        firefox.wait(lambda: text("status-text").startswith(f"Refused the device showing {d_code[:14]}")
                     and text("waiting") == "No device is waiting.", "the refusal")
        refused = fourth.run("join", passphrase=PASSPHRASE)
        assert refused.returncode == 1 and error_code(refused) == "joinRefused", refused.stderr
        assert len(devices()) == 3
    finally:
        firefox.stop()


def test_firefox_window_locks_after_the_idle_time_and_shows_it(sesame_bin, second_site, tmp_path):
    """The host's idle lock (`install-browser --idle 4`) in Firefox's window: the session the window started ends
    once unused for 4 s, the open window then asks for the passphrase with the reason, hides the password it
    showed, and the CLI finds the vault locked too."""
    from marionette_driver.keys import Keys
    firefox = FirefoxKeychain(sesame_bin, tmp_path, idle=4)
    try:
        vault, shown, text = firefox.vault, firefox.shown, firefox.text
        vault.add_password(second_site.rp_id, "lin", "locked-away-8")
        vault.ok("lock")
        firefox.client.navigate(second_site.origin + "/")
        firefox.open_window(second_site.origin)
        firefox.wait(lambda: shown("unlock-view"), "the unlock form")
        firefox.find("passphrase").send_keys("correct horse battery staple")
        firefox.press(Keys.ENTER)
        firefox.wait(lambda: shown("list-view") and firefox.labels("site-items"), "the list")
        firefox.open_item("site-items", "Password:")
        firefox.wait(lambda: shown("item-view") and text("username-value") == "lin", "the item")
        firefox.find("toggle-password").click()
        firefox.wait(lambda: text("password-value") == "locked-away-8", "the password shown")
        assert vault.ok("list")
        used = time.monotonic()

        firefox.wait(lambda: shown("unlock-view"), "the window locked after its idle time")
        assert time.monotonic() - used >= 3.5, "locked before the idle time"
        assert text("unlock-error") == "The keychain locked itself after it went unused."
        assert "locked-away-8" not in firefox.client.execute_script("return document.body.innerText")
        assert firefox.client.execute_script(
            "return document.getElementById('password-value').textContent") == "••••••••"
        locked = vault.run("list")
        assert locked.returncode == 2 and "passphraseUnavailable" in locked.stderr, locked.stderr
    finally:
        firefox.stop()


def test_firefox_window_passes_axe_core(firefox, second_site):
    """axe-core (the copy axe-selenium-python ships) finds no violation in the window's views in Firefox: the list with
    its sections open, an item, the edit form, the unlock form."""
    from marionette_driver.keys import Keys
    client, vault, shown = firefox.client, firefox.vault, firefox.shown
    vault.add_password(second_site.rp_id, "lin", "kitten-orbit-velvet-42", "--notes", "a note")
    # axe-core and its run in one script, in the page's own world (each Marionette sandbox is a fresh global).
    script = axe_core_source() + ";\n" + AXE_VIOLATIONS
    client.navigate(second_site.origin + "/")
    firefox.open_window(second_site.origin)

    def violations(view):
        found = client.execute_async_script(script, sandbox=None)
        assert found == [], f"{view}: {found}"

    firefox.wait(lambda: shown("list-view") and firefox.labels("site-items"), "the list")
    for section in ("sync", "transfer"):
        client.execute_script("document.querySelector(arguments[0]).click()", script_args=[f"#{section} summary"])
    violations("the list")
    firefox.find("search").click()
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: shown("item-view"), "the item")
    violations("an item")
    firefox.find("edit").click()
    firefox.wait(lambda: shown("edit-view"), "the edit form")
    violations("the edit form")
    firefox.press(Keys.ESCAPE)
    firefox.wait(lambda: shown("item-view"), "the item again")
    firefox.find("lock").click()
    firefox.wait(lambda: shown("unlock-view"), "the unlock form")
    violations("the unlock form")


def test_firefox_a_passkey_renamed_in_the_window_shows_renamed_at_sign_in(firefox, second_site, tmp_path):
    """A passkey's user name and display name changed in the window are what the site's sign-in prompt shows."""
    from marionette_driver.keys import Keys
    client, vault, shown, text = firefox.client, firefox.vault, firefox.shown, firefox.text
    options = {"rp": {"id": second_site.rp_id, "name": "Second"}, "challenge": b64url(b"c" * 32),
               "user": {"id": b64url(b"u" * 16), "name": "lin", "displayName": "Lin"},
               "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    (tmp_path / "options.json").write_text(json.dumps(options))
    vault.ok("webauthn", "create", "--origin", second_site.origin, "--options", str(tmp_path / "options.json"))
    client.navigate(second_site.origin + "/")
    site_tab = client.current_window_handle
    firefox.open_window(second_site.origin)
    firefox.wait(lambda: firefox.labels("site-items") == [
        f"Passkey: {second_site.rp_id}, lin · created {time.strftime('%Y-%m-%d', time.gmtime())}"], "the list")
    firefox.press(Keys.ENTER)
    firefox.wait(lambda: shown("item-view"), "the passkey's page")
    firefox.find("edit").click()
    firefox.wait(lambda: shown("edit-view"), "the edit form")
    firefox.replace("edit-username", "lin@work")
    firefox.replace("edit-display", "Lin at work")
    firefox.find("save").click()
    firefox.wait(lambda: shown("item-view") and text("username-value") == "lin@work", "the rename")

    # The site's own sign-in: the keychain's account chooser shows the new name.
    client.switch_to_window(site_tab)
    client.navigate(second_site.origin + "/")
    firefox.find("signin").click()
    firefox.wait_prompt("the modal sign-in prompt")
    shown_text = firefox.prompt_text()
    assert "lin@work" in shown_text and "Lin at work" in shown_text, shown_text
    firefox.press(Keys.ESCAPE)
