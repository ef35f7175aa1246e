"""An account's email address end to end: a real `sesame serve` with addresses on, mailing through aiosmtpd on
loopback (Tests/SMTPTests/Resources/relay.py: STARTTLS with its own CA, AUTH), Chromium with a virtual authenticator.
A person signs up, adds an address on the account page, and the delivered mail is read with Python's `email` parser
(headers, the text part and the HTML part); its link is followed in Chromium and confirmed there. Then a change
of address is confirmed with the typed code, and the old address is told."""

import re

from selenium.webdriver.common.by import By

from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, message, open_page, sign_up, type_into, wait)
from test_mail import Relay


def wait_for_mails(driver, relay, count):
    return wait(driver, lambda _: (lambda got: got if len(got) >= count else None)(relay.received()), timeout=30,
                what=f"{count} delivered mail(s)")


def verify_by_code(driver, relay, address):
    """On the account page: gives `address`, types the code from its verification mail (the relay's first) and waits
    until the page shows it confirmed."""
    wait(driver, lambda d: find(d, "email").is_displayed(), what="the email section")
    type_into(driver, "email-address", address)
    find(driver, "email-submit").click()
    [(_, _, verification)] = wait_for_mails(driver, relay, 1)
    code = re.search(r"Your code: ([0-9]{6})", parts(verification)[0]).group(1)
    wait(driver, lambda d: find(d, "email-code").is_displayed(), what="the code field")
    type_into(driver, "email-code", code)
    driver.find_element(By.CSS_SELECTOR, "#email-confirm-form button[type=submit]").click()
    wait(driver, lambda d: "confirmed" in find(d, "email-status").text, what="the verified address")


def parts(message_):
    text = message_.get_body(preferencelist=("plain",)).get_content()
    html = message_.get_body(preferencelist=("html",)).get_content()
    return text, html


def test_an_address_is_verified_by_the_mailed_link_and_changed_by_the_typed_code(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--email=optional", *relay.sesame_args()])
    try:
        authenticator(browser)
        sign_up(browser, server, "lin", "Lin")
        wait(browser, lambda d: find(d, "email").is_displayed(), what="the email section")
        type_into(browser, "email-address", "Lin@Example.NET")
        find(browser, "email-submit").click()
        wait(browser, lambda d: find(d, "email-confirm-form").is_displayed(), what="the code form")
        assert "Lin@Example.NET" in find(browser, "email-status").text

        [(sender, recipients, mail)] = wait_for_mails(browser, relay, 1)
        assert (sender, recipients) == ("sesame@example.org", "Lin@Example.NET")
        assert mail["From"] == "Sesame <sesame@example.org>" and mail["To"] == "Lin@Example.NET"
        assert mail["Subject"] == "Confirm your email address for Sesame"
        assert mail["Message-ID"] and mail["Date"].datetime is not None
        assert mail.get_content_type() == "multipart/alternative"
        text, html = parts(mail)
        code = re.search(r"Your code: ([0-9]{6})", text).group(1)
        link = re.search(r"(http://localhost:\d+/account/email/verify#[A-Za-z0-9_-]{43})", text).group(1)
        assert code in html and link in html.replace("&amp;", "&")
        assert link.startswith(server.origin)

        # The link's page changes nothing until the person confirms.
        browser.get(link)
        wait(browser, lambda d: find(d, "verify-confirm").is_displayed(), what="the confirm button")
        assert "Lin@Example.NET (pending)" in server.user("lin")
        find(browser, "verify-confirm").click()
        wait(browser, lambda d: "is confirmed" in message(d), what="the confirmation")
        assert "Lin@Example.NET (verified)" in server.user("lin")
        assert "#" not in browser.current_url, "the token stays out of the history"

        # A change: the code typed on the account page, and the old address told.
        open_page(browser, server, "/account")
        wait(browser, lambda d: "confirmed" in find(d, "email-status").text, what="the verified address")
        type_into(browser, "email-address", "lin@example.org")
        find(browser, "email-submit").click()
        mails = wait_for_mails(browser, relay, 2)
        code = re.search(r"Your code: ([0-9]{6})", parts(mails[1][2])[0]).group(1)
        wait(browser, lambda d: find(d, "email-code").is_displayed(), what="the code field")
        type_into(browser, "email-code", code)
        browser.find_element(By.CSS_SELECTOR, "#email-confirm-form button[type=submit]").click()
        wait(browser, lambda d: "lin@example.org is confirmed" in message(d), what="the change")
        mails = wait_for_mails(browser, relay, 3)
        (_, told, changed) = mails[2]
        assert told == "Lin@Example.NET" and changed["Subject"] == "Your email address for Sesame was changed"
        assert "l***@example.org" in parts(changed)[0] and "l***@example.org" in parts(changed)[1]
        assert "lin@example.org (verified)" in server.user("lin")
    finally:
        server.stop()
        relay.stop()
