"""`email=required` end to end: a real `sesame serve` mailing through aiosmtpd on loopback, Chromium with a virtual
authenticator. The sign-up page asks for the address and refuses to go on without one; the account is made with
the address pending and its mail delivered (read with Python's `email` parser); the account page asks for the code
until it is typed, and then shows the address confirmed."""

import re

from selenium.webdriver.common.by import By

from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, message, open_page, signed_in, type_into, wait)
from test_email_address import parts, wait_for_mails
from test_mail import Relay


def test_sign_up_asks_for_the_address_and_the_account_page_until_it_is_confirmed(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--email=required", *relay.sesame_args()])
    try:
        authenticator(browser)
        open_page(browser, server, "/signup")
        assert find(browser, "email").is_displayed()
        assert "needs one" in find(browser, "email-hint").text
        type_into(browser, "username", "grace")
        type_into(browser, "display-name", "Grace")
        find(browser, "signup-button").click()
        wait(browser, lambda d: "needs one" in message(d), what="the address asked for")
        assert browser.switch_to.active_element.get_attribute("id") == "email"
        assert "grace" not in server.admin("users", "list")

        # A bad address is refused by the server, before any passkey is made.
        type_into(browser, "email", "grace@localhost")
        find(browser, "signup-button").click()
        wait(browser, lambda d: "name@example.org" in message(d), what="the invalid address answer")
        assert browser.switch_to.active_element.get_attribute("id") == "email"

        type_into(browser, "email", "Grace@Example.NET")
        find(browser, "signup-button").click()
        signed_in(browser, server)
        [(_, to, mail)] = wait_for_mails(browser, relay, 1)
        assert to == "Grace@Example.NET" and mail["Subject"] == "Confirm your email address for Sesame"
        code = re.search(r"Your code: ([0-9]{6})", parts(mail)[0]).group(1)
        assert "Grace@Example.NET (pending)" in server.user("grace")

        # The account page asks for the code until it is typed.
        wait(browser, lambda d: find(d, "email-code").is_displayed(), what="the code field")
        assert "Grace@Example.NET" in find(browser, "email-status").text
        type_into(browser, "email-code", code)
        browser.find_element(By.CSS_SELECTOR, "#email-confirm-form button[type=submit]").click()
        wait(browser, lambda d: "confirmed" in find(d, "email-status").text, what="the confirmed address")
        assert "Grace@Example.NET (verified)" in server.user("grace")
        open_page(browser, server, "/account")
        wait(browser, lambda d: "confirmed" in find(d, "email-status").text, what="the address after a reload")
        assert not find(browser, "email-confirm-form").is_displayed()
    finally:
        server.stop()
        relay.stop()
