"""The console's Overview and recovery links end to end, in one browser session: a real `sesame serve`, Chromium
with virtual authenticators. An administrator signs up with a passkey, is made an administrator at the command line,
opens /console (the Overview), sees the figures; the page passes axe-core and is photographed at 1280 and 390 px.
The administrator makes a recovery link "show" for another account; that person, with cookies cleared and a new
authenticator, opens the link, adds a passkey in the limited session and signs in with it."""

import subprocess

from selenium.webdriver.common.by import By

from browser_keychain_fixtures import AXE_VIOLATIONS, axe_core_source
from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, engine, authenticator, browser, find, open_page, screenshot, sign_up, signed_in, wait, without_autofill)

# Calls the admin API from a console page with both CSRF tokens, as console.js does.
ADMIN_CALL = """
  const [method, path, body, done] = arguments;
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).getAttribute('content');
  fetch(path, {method, credentials: 'same-origin', headers: {
      'Content-Type': 'application/json', 'X-CSRF-Token': meta('sesame-csrf'),
      'X-Console-CSRF': meta('sesame-console-csrf')}, body: JSON.stringify(body)})
    .then(async (r) => done([r.status, await r.json()]), (e) => done([0, String(e)]));
"""


def text(driver, element_id) -> str:
    return find(driver, element_id).text.strip()


def test_an_admin_sees_the_overview_and_a_recovery_link_gives_a_person_a_new_passkey(sesame_bin, tmp_path, browser, engine):
    server = Server(sesame_bin, tmp_path, engine=engine)
    try:
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada")
        server.admin("groups", "add", "admins")
        server.admin("users", "groups", "add", "ada", "admins")
        made = subprocess.run([server.bin, "users", "create", "nia", f"--database={server.database}"],
                              input="correct horse battery staple\n", capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr

        # /console lands on the Overview, which shows the figures.
        open_page(browser, server, "/console")
        wait(browser, lambda d: d.current_url == server.origin + "/console/overview", what="the Overview")
        wait(browser, lambda d: text(d, "accounts-total") == "2", what="the number of accounts")
        assert text(browser, "accounts-disabled") == "0 disabled"
        assert text(browser, "signins-total") == "0"
        methods = [li.get_attribute("data-method")
                   for li in browser.find_elements(By.CSS_SELECTOR, "#signins-methods li")]
        assert "passkey" in methods and "recovery_link.used" in methods
        assert text(browser, "outbox-queued") == "0 mails waiting"
        assert text(browser, "metadata-number") == "None"
        version = subprocess.run([server.bin, "--version"], capture_output=True, text=True).stdout.strip()
        assert text(browser, "version") == version
        nodes = browser.find_elements(By.CSS_SELECTOR, "#nodes tr")
        assert len(nodes) == 1 and version in nodes[0].text
        current = browser.find_element(By.CSS_SELECTOR, 'nav.console a[aria-current="page"]')
        assert current.text == "Overview"
        for width in (1280, 390):
            screenshot(browser, "console-overview", width)

        # axe-core, with the page's CSP set aside for the checker's own script only.
        browser.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
        open_page(browser, server, "/console/overview")
        wait(browser, lambda d: text(d, "accounts-total") == "2", what="the Overview again")
        browser.execute_script(axe_core_source())
        found = browser.execute_async_script(AXE_VIOLATIONS)
        assert found == [], found
        browser.execute_cdp_cmd("Page.setBypassCSP", {"enabled": False})

        # A recovery link for nia, shown once.
        open_page(browser, server, "/console/overview")
        status, answer = browser.execute_async_script(
            ADMIN_CALL, "POST", "/api/admin/people/nia/recovery-link", {"deliver": "show"})
        assert status == 201, answer
        link = answer["link"]
        assert link.startswith(server.origin + "/recover/link#")
        assert "recovery_link.created" in server.admin("audit", "--user", "nia")

        # Nia, in a browser with no cookies and a new authenticator, opens it and adds a passkey.
        browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
        without_autofill(browser)
        authenticator(browser)
        browser.get(link)
        wait(browser, lambda d: find(d, "link-open").is_displayed(), what="the recovery link page")
        find(browser, "link-open").click()
        wait(browser, lambda d: find(d, "add-step").is_displayed(), what="the add-a-passkey step")
        find(browser, "add-passkey").click()
        wait(browser, lambda d: find(d, "done").is_displayed(), what="the passkey added")
        assert len(browser.get_credentials()) == 1
        assert len(server.passkey_lines("nia")) == 1
        # Used once: opening it again is refused (a new document, not a jump to the fragment).
        browser.get("about:blank")
        browser.get(link)
        wait(browser, lambda d: find(d, "link-open").is_displayed(), what="the recovery link page again")
        find(browser, "link-open").click()
        wait(browser, lambda d: "expired or was already used" in text(d, "message"), what="the spent link refused")

        # The new passkey signs nia in.
        open_page(browser, server, "/signin")
        find(browser, "passkey-button").click()
        signed_in(browser, server)
        assert "Nia" in find(browser, "who").text or "nia" in find(browser, "who").text
        audit = server.admin("audit", "--user", "nia")
        assert "recovery_link.used" in audit and "sign_in.passkey" in audit
    finally:
        server.stop()
