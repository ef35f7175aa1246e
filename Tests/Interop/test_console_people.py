"""The console's People pages in Chromium, against a real `sesame serve` (issue 31, part 1).

One browser session: an administrator signs up with a passkey (Chromium's virtual authenticator), is made an
administrator by the command line (`sesame groups add`, `sesame users groups add`), opens /console/people, searches,
opens a person, disables and enables them, removes their passkey, and deletes another account with its username
typed again; in Firefox (Debian's firefox-esr, over Marionette, with the same session) it searches, opens a person,
and disables and enables them. axe-core (the copy axe-selenium-python ships) finds no serious or critical violation on the list or on a
person's page; the pages are screenshotted at 1280 and 390 CSS pixels into docs/screenshots/. Then a signed-in
person outside the administrators' group gets the 403 page, and a signed-out visitor lands on the sign-in page with
the console as the place to return to.
"""

import subprocess
import urllib.parse

import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from browser_keychain_fixtures import AXE_VIOLATIONS, axe_core_source
from test_console_audit import firefox, firefox_wait
from test_browser_flows import (  # noqa: F401 (fixtures)
    authenticator, browser, confirm_totp, engine, engine_server, find, open_page, screenshot, server, set_up_totp,
    sideways_overflow, sign_up, type_into, wait,
)


def status(driver) -> str:
    return driver.find_element(By.ID, "status").text


def said(driver, text, what):
    try:
        WebDriverWait(driver, 30, poll_frequency=0.1).until(lambda d: text in status(d))
    except TimeoutException:
        pytest.fail(f"timed out waiting for {what}: status {status(driver)!r}, not {text!r}; page {driver.current_url}")


def serious_violations(driver, page, ready):
    """axe-core's serious and critical findings on the page. The console's Trusted Types policy would stop axe's
    own DOM writes, so its CSP is set aside (DevTools) for the reload that axe runs on."""
    driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    try:
        driver.refresh()
        wait(driver, lambda d: d.execute_script("return document.readyState") == "complete", what=f"{page} again")
        wait(driver, ready, what=f"{page} to settle")
        driver.execute_script(axe_core_source())
        script = AXE_VIOLATIONS.replace("done(r.violations", "done(r.violations.filter((v) => "
                                        "v.impact === 'serious' || v.impact === 'critical')")
        return driver.execute_async_script(script)
    finally:
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": False})


def create_with_password(server, username):
    done = subprocess.run([server.bin, "users", "create", username, f"--database={server.database}"],
                          input="correct horse battery staple\n", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def sign_out_of_browser(driver):
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})


def test_people_console(browser, engine_server, tmp_path):
    server = engine_server
    authenticator(browser)
    # bob signs up with a passkey first (a person the console will change), then ada, the administrator.
    sign_up(browser, server, "bob", "Bob Builder")
    sign_out_of_browser(browser)
    sign_up(browser, server, "ada", "Ada Lovelace")
    _, totp = set_up_totp(browser)  # ada's page will list it by name
    confirm_totp(browser, totp)
    create_with_password(server, "carol")
    server.admin("groups", "add", "admins")
    server.admin("users", "groups", "add", "ada", "admins")

    # The list: everyone, then a search.
    open_page(browser, server, "/console/people")
    said(browser, "Page 1: 3 people", "the list")
    rows = lambda d: [r.text.split(" ")[0] for r in d.find_elements(By.CSS_SELECTOR, "#people tbody tr")]
    assert rows(browser) == ["ada", "bob", "carol"]
    assert browser.find_element(By.CSS_SELECTOR, "nav.console a[aria-current='page']").text == "People"
    assert serious_violations(browser, "the list", lambda d: "Page 1" in status(d)) == []
    for width in (1280, 390):
        screenshot(browser, "console-people", width)
        assert sideways_overflow(browser, width) <= 0, f"the list scrolls sideways at {width}px"
    type_into(browser, "q", "BOB B")  # bob's display name, any case
    find(browser, "q").send_keys(Keys.ENTER)
    said(browser, "1 person matching “BOB B”", "the search")
    assert rows(browser) == ["bob"]

    # One person: disable and enable, each said and the focus kept on the button.
    browser.find_element(By.LINK_TEXT, "bob").click()
    wait(browser, lambda d: d.find_element(By.ID, "person-title").text == "Bob Builder (bob)", what="bob's page")
    assert browser.current_url.startswith(server.origin + "/console/people/")
    assert browser.switch_to.active_element.get_attribute("id") == "person-title"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#passkeys tbody tr")) == 1
    find(browser, "toggle-disabled").click()
    said(browser, "bob is disabled and signed out everywhere", "disabling")
    assert find(browser, "toggle-disabled").text == "Enable account"
    assert browser.switch_to.active_element.get_attribute("id") == "toggle-disabled"
    assert "disabled:     yes" in server.user("bob")
    find(browser, "toggle-disabled").click()
    said(browser, "bob is enabled again", "enabling")
    assert "disabled:     no" in server.user("bob")
    assert serious_violations(
        browser, "a person's page", lambda d: d.find_element(By.ID, "person-title").text == "Bob Builder (bob)") == []
    for width in (1280, 390):
        screenshot(browser, "console-people-person", width)
        assert sideways_overflow(browser, width) <= 0, f"a person's page scrolls sideways at {width}px"

    # Remove bob's passkey.
    find(browser, "remove-passkey-0").click()
    said(browser, "removed", "removing the passkey")
    wait(browser, lambda d: "None." in find(d, "passkeys").text, what="the empty passkey list")
    assert browser.switch_to.active_element.get_attribute("id") == "passkeys-title"
    assert server.passkey_lines("bob") == []

    # The last administrator cannot be disabled: the refusal is said.
    ada = [line for line in server.user("ada").splitlines() if line.startswith("id:")][0].split()[-1]
    open_page(browser, server, f"/console/people/{ada}")
    wait(browser, lambda d: d.find_element(By.ID, "person-title").text == "Ada Lovelace (ada)", what="ada's page")
    wait(browser, lambda d: "Authenticator app (TOTP)" in find(d, "factors").text, what="ada's factor by name")
    find(browser, "toggle-disabled").click()
    said(browser, "nobody", "the last-administrator refusal")
    assert browser.find_element(By.ID, "status").get_attribute("role") == "alert"
    assert "disabled:     no" in server.user("ada")

    # Delete carol: the button waits for her username typed exactly.
    open_page(browser, server, "/console/people?q=car")
    said(browser, "1 person", "the search from the address")
    browser.find_element(By.LINK_TEXT, "carol").click()
    wait(browser, lambda d: d.find_element(By.ID, "person-title").text == "carol", what="carol's page")
    type_into(browser, "confirm-username", "Carol")
    assert not find(browser, "delete-button").is_enabled()
    type_into(browser, "confirm-username", "carol")
    assert find(browser, "delete-button").is_enabled()
    find(browser, "delete-button").click()
    said(browser, "carol is deleted", "the deletion")
    assert browser.current_url == server.origin + "/console/people"
    assert browser.switch_to.active_element.get_attribute("id") == "list-title"
    assert rows(browser) == ["ada", "bob"]
    users = server.admin("users", "list")
    assert "carol" not in users and "bob" in users

    # The same pages in Firefox with ada's session: search, open bob, disable and enable him.
    session = browser.get_cookie("sesame_session")
    assert session, "no session cookie"
    firefox_people(server, session, tmp_path)

    # Someone signed in outside the administrators' group gets the 403 page.
    sign_out_of_browser(browser)
    sign_up(browser, server, "dan", "Dan")
    open_page(browser, server, "/console/people")
    assert "Not for this account" in browser.find_element(By.TAG_NAME, "h1").text
    assert browser.execute_async_script(
        "const done = arguments[0]; fetch('/console/people').then((r) => done(r.status));") == 403

    # A signed-out visitor is sent to sign in with a passkey and come back.
    sign_out_of_browser(browser)
    browser.get(server.origin + "/console/people/" + ada)
    # The address is read once, where the console sent the browser: the sign-in page's passkey AutoFill may sign in
    # with the virtual authenticator and move on before a second read.
    seen = []
    wait(browser, lambda d: seen.append(d.current_url) or seen[-1].startswith(server.origin + "/signin?"),
         what="the sign-in page")
    query = urllib.parse.parse_qs(urllib.parse.urlparse(seen[-1]).query)
    assert query["return"] == [f"/console/people/{ada}"] and query["passkey"] == ["required"]


def firefox_people(server, session, directory):
    """/console/people in headless Firefox: search, open bob, disable and enable him, each said on the page and
    done on the server."""
    from marionette_driver import By as FirefoxBy
    from marionette_driver.keys import Keys as FirefoxKeys
    status_text = "return document.getElementById('status').textContent"
    names = "return [...document.querySelectorAll('#people tbody tr')].map(r => r.cells[0].textContent.trim())"
    with firefox(server, session, directory) as client:
        client.navigate(server.origin + "/console/people")
        firefox_wait(client, lambda c: "Page 1: 2 people" in c.execute_script(status_text), "the list")
        assert client.execute_script(names) == ["ada", "bob"]
        field = client.find_element(FirefoxBy.ID, "q")
        field.send_keys("bob")
        field.send_keys(FirefoxKeys.ENTER)
        firefox_wait(client, lambda c: c.execute_script(names) == ["bob"], "the search")
        client.find_element(FirefoxBy.LINK_TEXT, "bob").click()
        title = "return (document.getElementById('person-title') || {}).textContent"
        firefox_wait(client, lambda c: c.execute_script(title) == "Bob Builder (bob)", "bob's page")
        assert client.get_url().startswith(server.origin + "/console/people/")
        client.find_element(FirefoxBy.ID, "toggle-disabled").click()
        firefox_wait(client, lambda c: "bob is disabled" in c.execute_script(status_text), "disabling")
        assert "disabled:     yes" in server.user("bob")
        client.find_element(FirefoxBy.ID, "toggle-disabled").click()
        firefox_wait(client, lambda c: "bob is enabled again" in c.execute_script(status_text), "enabling")
        assert "disabled:     no" in server.user("bob")
