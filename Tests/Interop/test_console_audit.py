"""The console's audit log page (/console/audit) against a real `sesame serve`, in one Chromium session: an admin
signs up with a passkey (Chromium's virtual authenticator) and is made an admin by the command line, some sign-ins
happen, the page filters by person and kind, an app's event links to the app, its CSV link downloads the filtered rows with the session, axe-core
finds nothing serious, and the screenshots in docs/ are made. The same page then loads and filters in Firefox
(Debian's firefox-esr, over Marionette) with the same session. And, curl-style, an admin API token with the scope
`groups` lists groups and is refused the audit log."""

import contextlib
import json
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from browser_keychain_fixtures import AXE_VIOLATIONS, axe_core_source
from conftest import free_port
from test_browser_flows import (Server, engine, authenticator, browser, find, open_page, screenshot, sign_up,  # noqa: F401
                                type_into, wait)


def call(server, method, path, body=None, token=None):
    """(status, parsed JSON or text) from the server, as a script would call it."""
    request = urllib.request.Request(server.origin + path, method=method,
                                     data=None if body is None else json.dumps(body).encode())
    request.add_header("Origin", server.origin)
    request.add_header("Sesame-Client", "native")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            raw = answer.read()
            status = answer.status
    except urllib.error.HTTPError as error:
        raw = error.read()
        status = error.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()


def rows(driver):
    """The audit table's rows as [kind, outcome, person] lists."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#events tbody tr')].map(r =>"
        " [r.cells[1].dataset.kind, r.cells[2].textContent, r.cells[3].textContent])")


def test_the_audit_log_page(browser, sesame_bin, tmp_path, engine):
    server = Server(sesame_bin, tmp_path, engine=engine)
    try:
        # An admin: a passkey sign-up, put in the administrators' group by the command line.
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada Lovelace")
        server.admin("groups", "add", "admins")
        server.admin("users", "groups", "add", "ada", "admins")

        # Some sign-ins: bob with his password, right twice and wrong once.
        made = subprocess.run([server.bin, "users", "create", "bob", f"--database={server.database}"],
                              input="correct horse battery\n", capture_output=True, text=True, timeout=60)
        assert made.returncode == 0, made.stderr
        for password, expected in (("correct horse battery", 200), ("wrong horse", 401),
                                   ("correct horse battery", 200)):
            status, answer = call(server, "POST", "/api/sessions/password",
                                  {"username": "bob", "password": password})
            assert (status == 200) == (expected == 200), answer

        # An app registered at the command line: its event concerns the app, and no person.
        out = server.admin("clients", "add", "--name", "Wiki", "--redirect-uri", "https://wiki.example.org/callback")
        client_id = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)["client_id"]

        open_page(browser, server, "/console/audit")
        wait(browser, lambda d: len(rows(d)) > 0, what="the audit log's rows")
        kinds = {row[0] for row in rows(browser)}
        assert {"sign_in.password", "group.member_added"} <= kinds, kinds
        # Each kind by its name in the page's language, the kind itself beside it.
        named = browser.execute_script(
            "return [...document.querySelectorAll('#events tbody tr')].map(r => r.cells[1].textContent)")
        assert "Sign-in with a passwordsign_in.password" in named, named

        # Filter by person and kind: only bob's password sign-ins, the wrong one among them.
        type_into(browser, "person", "bob")
        type_into(browser, "kind", "sign_in.password")
        find(browser, "filters").submit()
        wait(browser, lambda d: len(rows(d)) == 3 and all(r[2] == "bob" for r in rows(d)), what="bob's sign-ins")
        assert sorted(r[1] for r in rows(browser)) == ["failure", "success", "success"]
        assert browser.current_url.endswith("/console/audit?person=bob&kind=sign_in.password")
        link = browser.find_element(By.CSS_SELECTOR, "#events tbody tr td:nth-child(4) a")
        assert "/console/people?id=" in link.get_attribute("href")
        # By outcome too, keyboard only: the select reached and changed without a mouse.
        Select(find(browser, "outcome")).select_by_value("failure")
        find(browser, "filters").submit()
        wait(browser, lambda d: len(rows(d)) == 1, what="bob's failed sign-in")

        # The CSV link downloads the filtered rows with the session.
        href = find(browser, "csv").get_attribute("href")
        assert "person=bob" in href and "outcome=failure" in href
        status, kind, text = browser.execute_async_script("""
          const done = arguments[arguments.length - 1];
          fetch(arguments[0], {credentials: 'same-origin'}).then(async (r) =>
            done([r.status, r.headers.get('Content-Type'), await r.text()]), (e) => done([0, '', String(e)]));
        """, href)
        assert status == 200 and kind.startswith("text/csv"), text
        lines = [line for line in text.split("\r\n") if line]
        assert lines[0] == "at,kind,outcome,user_id,username,client_address,detail,id,client_id"
        assert len(lines) == 2 and ",sign_in.password,failure," in lines[1] and ",bob," in lines[1]

        # axe-core: nothing serious or critical, filtered or not.
        source = axe_core_source()
        browser.execute_script(source)
        violations = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            " axe.run(document).then((r) => done(r.violations.filter((v) => ['serious', 'critical'].includes(v.impact))"
            ".map((v) => [v.id, v.nodes.map((n) => n.target)])), (e) => done([['error', String(e)]]))")
        assert violations == [], violations

        # Screenshots: the whole log (no filters) at both widths, with no horizontal scrolling.
        find(browser, "clear").click()
        wait(browser, lambda d: len(rows(d)) > 3, what="the unfiltered log")
        for width in (1280, 390):
            screenshot(browser, "console-audit", width)
        browser.set_window_size(390, 900)
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        browser.set_window_size(1280, 900)

        # An event about an app links to it: the apps page opens that app.
        open_page(browser, server, "/console/audit?kind=client.added")
        wait(browser, lambda d: len(rows(d)) == 1, what="the app's event")
        app_link = browser.find_element(By.CSS_SELECTOR, "#events tbody tr td:nth-child(5) a")
        assert app_link.get_attribute("href") == f"{server.origin}/console/apps?app={client_id}"
        assert app_link.text == client_id
        assert not browser.find_elements(By.CSS_SELECTOR, "#events tbody tr td:nth-child(4) a")  # no person
        app_link.click()
        wait(browser, lambda d: find(d, "detail").is_displayed() and find(d, "detail-id").text == client_id,
             what="the app opened from the audit log")
        assert find(browser, "detail-heading").text == "Wiki"
        assert browser.switch_to.active_element.get_attribute("id") == "detail-heading"
        # Events about no app say so in that column.
        open_page(browser, server, "/console/audit?kind=sign_in.password")
        wait(browser, lambda d: len(rows(d)) == 3, what="the sign-ins again")
        assert not browser.find_elements(By.CSS_SELECTOR, "#events tbody tr td:nth-child(5) a")

        # The same page in Firefox, with the same session.
        session = browser.get_cookie("sesame_session")
        assert session, "no session cookie"
        firefox_filters(server, session, tmp_path)

        # Curl-style: a token with the scope `groups` lists groups, and is refused the audit log.
        created = server.admin("admin-tokens", "create", "--name", "ci", "--scope", "groups")
        token = created.splitlines()[0]
        assert token.startswith("sesame_at_")
        status, answer = call(server, "GET", "/api/admin/groups", token=token)
        assert status == 200 and [g["slug"] for g in answer["groups"]] == ["admins"], answer
        status, answer = call(server, "GET", "/api/admin/audit", token=token)
        assert status == 403 and answer["error"] == "admin_scope_missing", answer
        status, answer = call(server, "GET", "/api/admin/groups", token="sesame_at_" + "A" * 43)
        assert status == 401 and answer["error"] == "unauthenticated", answer
        assert token not in server.log_path.read_text()
    finally:
        server.stop()


@contextlib.contextmanager
def firefox(server, session, directory):
    """Headless Firefox (Debian's firefox-esr, over Marionette) holding the Chromium session's cookie, on `server`'s
    origin; yields the Marionette client."""
    from marionette_driver.marionette import Marionette
    binary = shutil.which("firefox-esr") or shutil.which("firefox")
    if not binary:
        pytest.fail("firefox-esr (Debian package) is required; scripts/test installs it")
    client = Marionette(host="127.0.0.1", port=free_port(), bin=binary, headless=True,
                        gecko_log=str(directory / "gecko.log"))
    client.start_session()
    try:
        client.timeout.script = 30
        client.navigate(server.origin + "/health")
        client.add_cookie({"name": session["name"], "value": session["value"], "path": "/", "httpOnly": True,
                           "sameSite": session.get("sameSite", "Lax")})
        yield client
    finally:
        try:
            client.delete_session()
        finally:
            client.cleanup()


def firefox_wait(client, condition, what, timeout=30):
    """Polls `condition(client)` until it is true (no fixed sleep); fails saying `what` was not seen."""
    from marionette_driver.errors import TimeoutException
    from marionette_driver.wait import Wait
    try:
        return Wait(client, timeout=timeout, interval=0.1).until(condition)
    except TimeoutException:
        pytest.fail(f"Firefox: timed out waiting for {what} at {client.get_url()}")


def firefox_filters(server, session, directory):
    """/console/audit?person=bob in headless Firefox with the Chromium session's cookie: it loads and filters."""
    with firefox(server, session, directory) as client:
        client.navigate(server.origin + "/console/audit?person=bob&kind=sign_in.password")
        cells = ("return [...document.querySelectorAll('#events tbody tr')]"
                 ".map(r => r.cells[3].textContent)")
        firefox_wait(client, lambda c: len(c.execute_script(cells) or []) == 3, "bob's three sign-ins")
        assert client.execute_script(cells) == ["bob", "bob", "bob"]
        assert client.execute_script("return document.getElementById('person').value") == "bob"
