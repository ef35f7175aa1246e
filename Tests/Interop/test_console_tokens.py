"""The console's admin API tokens page (/console/tokens, issue 31) in Chromium, against a real `sesame serve`.

An administrator (a passkey sign-up, put in the administrators' group by the command line) makes a token on the
page with two scopes and a lifetime: the token is shown once with a copy button, works over HTTP within its scopes,
is refused outside them, cannot make a token nor open the console, and never shows again after a reload. The list
shows it as the command line does; revoking asks first (keeping it changes nothing), then the token is refused. The
change is audited naming the administrator. axe-core finds nothing serious or critical, and the page is
photographed at 1280 and 390 px for docs/console.md.
"""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_keychain_fixtures import axe_core_source
from test_browser_flows import (  # noqa: F401 (browser and server are fixtures)
    authenticator, browser, engine, engine_server, find, server, sign_up, type_into, wait,
)
from test_console_apps import checked, page, rows, wait_status
from test_console_audit import call


def token_rows(driver):
    """Each token's row as (id, state, text)."""
    return [(row.get_attribute("data-id"), row.get_attribute("data-state"), row.text)
            for row in driver.find_elements(By.CSS_SELECTOR, "#tokens tr[data-id]")]


def test_console_tokens_page(browser, engine_server):
    server = engine_server
    axe = axe_core_source()
    authenticator(browser)
    sign_up(browser, server, "ada", "Ada Lovelace")
    server.admin("groups", "add", "admins")
    server.admin("users", "groups", "add", "ada", "admins")

    # The form offers every scope; the list starts empty.
    page(browser, server, "tokens", lambda d: d.find_elements(By.CSS_SELECTOR, "#scopes input[value=audit]"))
    offered = [box.get_attribute("value") for box in browser.find_elements(By.CSS_SELECTOR, "#scopes input")]
    assert {"people", "groups", "audit", "tokens", "forward-auth"} <= set(offered), offered
    assert rows(browser, "tokens") == ["No tokens yet."]

    # Make one: a name, two scopes, 30 days.
    type_into(browser, "name", "nightly report")
    find(browser, "scope-audit").click()
    find(browser, "scope-people").click()
    Select(find(browser, "lifetime")).select_by_value("30")
    find(browser, "create").find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda d: find(d, "created").is_displayed(), what="the new token")
    wait_status(browser, "Token nightly report created.", "the status line")
    token = find(browser, "created-token").text
    assert token.startswith("sesame_at_") and len(token) == 53, token
    wait(browser, lambda d: len(token_rows(d)) == 1, what="the list")
    token_id, state, text = token_rows(browser)[0]
    assert state == "active" and "nightly report" in text and "people, audit" in text, text
    listed = server.admin("admin-tokens", "list")
    assert token_id in listed and "nightly report" in listed and "people,audit" in listed, listed

    # The copy button puts the token on the clipboard.
    browser.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": server.origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    find(browser, "copy").click()
    wait_status(browser, "The token is copied.", "the copy")
    pasted = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        " navigator.clipboard.readText().then(done, (e) => done('failed: ' + e));")
    assert pasted == token

    checked(browser, "tokens", axe)

    # Over HTTP, as a script: within its scopes, and nothing more.
    status, answer = call(server, "GET", "/api/admin/audit?kind=admin_token.created", token=token)
    assert status == 200, answer
    assert [e["detail"] for e in answer["events"]] == [f"{token_id} nightly report scopes=people,audit by admin ada"]
    assert answer["events"][0]["username"] == "ada"
    status, answer = call(server, "GET", "/api/admin/groups", token=token)
    assert status == 403 and answer["error"] == "admin_scope_missing", answer
    # It cannot make a token, even one that holds the `tokens` scope cannot; nor open the console's pages.
    status, answer = call(server, "POST", "/api/admin/tokens", {"name": "more", "scopes": ["audit"]}, token=token)
    assert status == 403, answer
    minter = server.admin("admin-tokens", "create", "--name", "minter", "--scope", "tokens").splitlines()[0]
    status, answer = call(server, "POST", "/api/admin/tokens", {"name": "more", "scopes": ["audit"]}, token=minter)
    assert status == 403 and answer["error"] == "admin_token_needs_person", answer
    status, _ = call(server, "GET", "/console/tokens", token=minter)
    assert status == 403
    assert "more" not in server.admin("admin-tokens", "list")

    # After a reload the token is nowhere on the page.
    browser.refresh()
    wait(browser, lambda d: len(token_rows(d)) == 2, what="the list after a reload")
    assert token not in browser.page_source and not find(browser, "created").is_displayed()

    # Revoking asks first; keeping it changes nothing.
    browser.find_element(By.CSS_SELECTOR, f"#tokens button[data-id='{token_id}']").click()
    wait(browser, lambda d: find(d, "revoke-box").is_displayed(), what="the confirmation")
    assert "nightly report" in find(browser, "revoke-question").text
    assert browser.switch_to.active_element.get_attribute("id") == "revoke-confirm"
    find(browser, "revoke-cancel").click()
    wait(browser, lambda d: not find(d, "revoke-box").is_displayed(), what="the confirmation to close")
    assert call(server, "GET", "/api/admin/audit", token=token)[0] == 200
    browser.find_element(By.CSS_SELECTOR, f"#tokens button[data-id='{token_id}']").click()
    wait(browser, lambda d: find(d, "revoke-box").is_displayed(), what="the confirmation again")
    find(browser, "revoke-confirm").click()
    wait_status(browser, "nightly report is revoked.", "the revocation")
    wait(browser, lambda d: any(i == token_id and s == "revoked" for i, s, _ in token_rows(d)), what="the row")
    assert any(i == token_id and "Revoked" in t for i, _, t in token_rows(browser))
    status, answer = call(server, "GET", "/api/admin/audit", token=token)
    assert status == 401 and answer["error"] == "unauthenticated", answer
    status, answer = call(server, "GET", "/api/admin/audit?kind=admin_token.revoked", token=minter)
    assert status == 403  # the minter holds `tokens` only
    revoked = [line for line in server.admin("audit").splitlines() if "admin_token.revoked" in line]
    assert len(revoked) == 1 and "by admin ada" in revoked[0], revoked
    assert token not in server.log_path.read_text()
