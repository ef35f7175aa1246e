"""A sign-in from a device not seen before, end to end: a real `sesame serve` with addresses on, mailing through
aiosmtpd on loopback, Chromium with a virtual authenticator. The browser that signed up signs in again without a
mail; once its device cookie is gone (as in a new browser) the passkey sign-in mails "New sign-in to your account",
read with Python's `email` parser (both parts, the device and the address), and the mail's link opens the account
in Chromium."""

import re


from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, open_page, restore, sign_out, sign_up, signed_in, type_into, wait,
    without_autofill)
from test_email_address import parts, verify_by_code, wait_for_mails
from test_mail import Relay


def device_cookies(driver, server):
    """The `sesame_device` cookies the browser holds for the API (HttpOnly, so read through DevTools)."""
    answer = driver.execute_cdp_cmd("Network.getCookies", {"urls": [server.origin + "/api/"]})
    return [c for c in answer["cookies"] if c["name"] == "sesame_device"]


def passkey_sign_in(driver, server, saved):
    without_autofill(driver)
    restore(driver, saved)
    open_page(driver, server, "/signin")
    find(driver, "passkey-button").click()
    signed_in(driver, server)


def test_a_new_browser_is_mailed_about_and_then_remembered(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--email=optional", *relay.sesame_args()])
    try:
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada")
        [cookie] = device_cookies(browser, server)
        assert cookie["httpOnly"] and cookie["path"] == "/api" and cookie["sameSite"] == "Strict"
        assert len(cookie["value"]) == 22

        # A verified address, typed from the mail's code.
        verify_by_code(browser, relay, "ada@example.net")

        # The browser that signed up signs in again: it is known, nothing is mailed.
        passkey_sign_in(browser, server, sign_out(browser, server))

        # The same browser without its device cookie is a new device: one mail, and the cookie again.
        saved = sign_out(browser, server)
        browser.execute_cdp_cmd("Network.deleteCookies", {"name": "sesame_device", "url": server.origin + "/api/"})
        assert device_cookies(browser, server) == []
        passkey_sign_in(browser, server, saved)
        mails = wait_for_mails(browser, relay, 2)
        assert len(mails) == 2, [m["Subject"] for (_, _, m) in mails]
        (_, to, notice) = mails[1]
        assert to == "ada@example.net"
        assert notice["Subject"] == "New sign-in to your account on Sesame"
        text, html = parts(notice)
        assert text.startswith("New sign-in to your account\n")
        assert "(username ada)" in text
        assert "Device: Chrome on Linux\nFrom the address: 127.0.0.1\n" in text, text
        assert "<li>Device: Chrome on Linux</li><li>From the address: 127.0.0.1</li>" in html
        assert "HeadlessChrome" not in text and "Mozilla" not in html
        assert [c["value"] for c in device_cookies(browser, server)] == [cookie["value"]]

        # The mail's link opens the account.
        link = re.search(r"(http://localhost:\d+/account)\b", text).group(1)
        browser.get(link)
        wait(browser, lambda d: d.current_url.startswith(server.origin + "/account"), what="the account page")
        wait(browser, lambda d: "Ada" in find(d, "who").text, what="the account's name")
        assert len(relay.received()) == 2
    finally:
        server.stop()
        relay.stop()
