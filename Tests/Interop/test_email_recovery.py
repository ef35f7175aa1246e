"""Recovery by email end to end: a real `sesame serve` with `--email-recovery=true`, mailing through aiosmtpd on
loopback, Chromium with virtual authenticators. A person whose passkey is gone asks on the sign-in page for a code,
reads it from the delivered mail (Python's `email` parser), types it, adds a new passkey from a new authenticator in
the limited session, is told by mail, and signs in with the new passkey."""

import re

from selenium.webdriver.common.by import By

from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, message, open_page, sign_out, sign_up, signed_in, type_into, wait,
    without_autofill)
from test_email_address import parts, verify_by_code, wait_for_mails
from test_mail import Relay


def test_a_mailed_code_lets_a_person_without_a_passkey_add_a_new_one(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--email=optional", "--email-recovery=true", *relay.sesame_args()])
    try:
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada")
        verify_by_code(browser, relay, "ada@example.net")
        [old_passkey] = server.passkey_lines("ada")

        # The passkey is lost: its authenticator is gone, and a new one holds nothing.
        sign_out(browser, server)
        without_autofill(browser)
        authenticator(browser)
        open_page(browser, server, "/signin")
        browser.find_element(By.CSS_SELECTOR, "#other-ways summary").click()
        link = wait(browser, lambda d: find(d, "recover-link") if find(d, "recover-link").is_displayed() else None,
                    what="the recovery link")
        link.find_element(By.TAG_NAME, "a").click()
        wait(browser, lambda d: d.current_url == server.origin + "/recover", what="the recovery page")
        type_into(browser, "identifier", "ada")
        find(browser, "ask-button").click()
        wait(browser, lambda d: find(d, "recovery-code").is_displayed(), what="the code field")

        mails = wait_for_mails(browser, relay, 2)
        (_, to, mail) = mails[1]
        assert to == "ada@example.net" and mail["Subject"] == "Your sign-in code for Sesame"
        text, html = parts(mail)
        code = re.search(r"Your code: ([0-9]{8})", text).group(1)
        assert code in html and "only lets you add a new passkey or security key" in text

        # A wrong code first: refused, the form stays.
        type_into(browser, "recovery-code", "00000000" if code != "00000000" else "00000001")
        find(browser, "code-button").click()
        wait(browser, lambda d: "isn’t right" in message(d), what="the wrong code refused")
        type_into(browser, "recovery-code", code)
        find(browser, "code-button").click()
        wait(browser, lambda d: find(d, "add-step").is_displayed(), what="the add-a-passkey step")

        find(browser, "add-passkey").click()
        wait(browser, lambda d: find(d, "done").is_displayed(), what="the passkey added")
        assert len(browser.get_credentials()) == 1
        lines = server.passkey_lines("ada")
        assert len(lines) == 2 and old_passkey in lines
        subjects = [m["Subject"] for (_, _, m) in wait_for_mails(browser, relay, 4)]
        assert sorted(subjects[2:]) == [
            "A passkey was added to your account on Sesame", "Your account was recovered by email on Sesame"]
        audit = server.admin("audit", "--user", "ada")
        assert "email_recovery.signed_in" in audit and "email_recovery.requested" in audit

        # The limited session was signed out; the new passkey signs in.
        open_page(browser, server, "/signin")
        find(browser, "passkey-button").click()
        signed_in(browser, server)
        assert "Ada" in find(browser, "who").text
    finally:
        server.stop()
        relay.stop()
