"""Sesame in other languages, in Chromium against a real `sesame serve` (issue 32's browser checks).

1. The pseudo-language `en-XA` (English accented, 40 % longer, in brackets): every page — the public ones, the
   account page, every console page, and the pages an application or a proxy sends people to (consent, an
   application's error, device approval, sign-out, forward auth's no-access page) — at 390 and 1280 px, with no text cut off or overflowing its box, no
   horizontal scrolling of the page, and no English sentence left unbracketed (text outside the catalog).
2. Korean and Arabic: sign-up, sign-in, the account page and a mail, chosen by the browser's Accept-Language, with
   `lang`, `dir` and the words of the language; in Arabic the page mirrors while usernames and codes stay left to
   right. Screenshots go to docs/screenshots/lang-<tag>-<page>-<width>.png for docs/web.md."""

import base64
import json
import re
import subprocess

from selenium.webdriver.common.by import By

from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, open_page, screenshot, sign_up, signed_in, type_into, wait)
from test_email_address import parts, wait_for_mails
from test_mail import Relay
from browser_keychain_fixtures import second_site  # noqa: F401  (fixture)

CONSOLE_PAGES = ["overview", "people", "people/ada", "groups", "invitations", "apps", "forward-auth", "keys",
                 "metadata", "settings", "tokens", "audit"]

# Every visible element whose text overflows its own box (cut off or spilling out), and the page's horizontal
# overflow. Text that scrolls inside a scroll container on purpose (wide tables) is measured against its cell.
OVERFLOW = """
const found = [];
const page = document.documentElement;
if (page.scrollWidth > window.innerWidth + 1) found.push(`the page scrolls sideways: ${page.scrollWidth}px`);
for (const el of document.querySelectorAll('body *')) {
  if (!el.offsetParent && getComputedStyle(el).position !== 'fixed') continue;
  if (['SCRIPT', 'STYLE', 'svg', 'IMG', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTION'].includes(el.tagName)) continue;
  const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim()).length > 0;
  if (!own) continue;
  const box = el.getBoundingClientRect();
  if (box.width <= 1 || box.height <= 1) continue;  // nothing, or for screen readers only (a 1px clipped box)
  const style = getComputedStyle(el);
  if (el.scrollWidth > el.clientWidth + 1 && style.overflowX !== 'visible' && style.overflowX !== 'auto'
      && style.overflowX !== 'scroll') {
    found.push(`cut off: <${el.tagName.toLowerCase()} id=${el.id}> ${el.textContent.trim().slice(0, 60)}`);
    continue;
  }
  const range = document.createRange();
  range.selectNodeContents(el);
  const text = range.getBoundingClientRect();
  if (text.right > box.right + 2 || text.left < box.left - 2) {
    found.push(`overflows: <${el.tagName.toLowerCase()} id=${el.id}> ${el.textContent.trim().slice(0, 60)}`);
  }
}
return found;
"""

# Visible text nodes that hold an English-looking run of words outside the pseudo-language's brackets.
UNBRACKETED = """
const data = arguments[0];
const found = [];
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  const node = walker.currentNode;
  const el = node.parentElement;
  if (!el || !el.offsetParent || el.closest('script, style, code, pre, .data, input, textarea')) continue;
  let text = node.textContent.replace(/\\[[^\\]]*\\]?/g, ' ');
  for (const value of data) text = text.split(value).join(' ');
  if (/[A-Za-z]{3,}[ ,]+[A-Za-z]{3,}/.test(text)) found.push(text.trim().slice(0, 80));
}
return found;
"""


def set_language(driver, tag):
    agent = driver.execute_script("return navigator.userAgent")
    driver.execute_cdp_cmd("Network.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": tag})


def settle(driver):
    """The page has loaded and its scripts have had their first turn (no request of theirs is pending)."""
    wait(driver, lambda d: d.execute_script(
        "return document.readyState === 'complete' && !document.querySelector('[aria-busy=true]')"), what="the page")


def at_width(driver, width):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})


def check_page(driver, name, data, problems):
    """The open page is in the pseudo-language, fits at 390 and 1280 px, and shows no English outside `data`."""
    settle(driver)
    assert driver.execute_script("return document.documentElement.lang") == "en-XA", name
    for width in (390, 1280):
        at_width(driver, width)
        settle(driver)
        found = driver.execute_script(OVERFLOW)
        if found:
            problems[f"{name} at {width}px"] = found
    found = driver.execute_script(UNBRACKETED, data)
    if found:
        problems[f"{name}: text outside the catalog"] = found
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_every_page_fits_in_the_pseudo_language(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path,
                    extra_args=["--email=optional", "--email-recovery=true", *relay.sesame_args()])
    try:
        set_language(browser, "en-XA")
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada")
        server.admin("groups", "add", "admins")
        server.admin("users", "groups", "add", "ada", "admins")
        pages = ["/account", "/account/email/verify", "/recover/link", "/device"]
        pages += [f"/console/{page}" for page in CONSOLE_PAGES]
        signed_out = ["/signin", "/signup", "/recover"]
        # What is data, not words: names, the origin, the build's version line, the browser's user agent (a
        # session's device).
        version = subprocess.run([server.bin, "--version"], capture_output=True, text=True).stdout.strip()
        agent = browser.execute_script("return navigator.userAgent")
        data = [server.origin, version, agent, "ada", "Ada", "Sesame", "admins", "localhost"]
        problems = {}
        for path in pages + ["(sign out)"] + signed_out:
            if path == "(sign out)":
                browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
                continue
            open_page(browser, server, path)
            check_page(browser, path, data, problems)
        (tmp_path / "problems.json").write_text(json.dumps(problems, indent=1, ensure_ascii=False))
        assert problems == {}, problems
    finally:
        set_language(browser, "en")
        server.stop()
        relay.stop()


def test_the_pages_apps_and_proxies_show_fit_in_the_pseudo_language(sesame_bin, tmp_path, browser):
    """The pages filled per request for an application or a proxy: consent, an application's error, device approval,
    sign-out's confirmation and its done page, and forward auth's no-access page."""
    rules = json.dumps([{"host": "team.localhost", "policy": "nobody"}])
    server = Server(sesame_bin, tmp_path, extra_args=[
        "--forward-auth-domains=team.localhost", f"--forward-auth-rules={rules}"])
    try:
        set_language(browser, "en-XA")
        authenticator(browser)
        sign_up(browser, server, "ada", "Ada")
        out = server.admin("clients", "add", "--name", "Wiki", "--public", "--redirect-uri",
                           "http://127.0.0.1:9/callback")
        client_id = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)["client_id"]
        agent = browser.execute_script("return navigator.userAgent")
        data = [server.origin, agent, "ada", "Ada", "Sesame", "Wiki", "localhost", "team.localhost", "openid"]
        problems = {}
        authorize = ("/oauth/authorize?response_type=code&scope=openid%20profile&state=s"
                     "&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&code_challenge_method=S256"
                     "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")

        open_page(browser, server, f"{authorize}&client_id={client_id}")
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "form"), what="the consent page")
        check_page(browser, "consent", data, problems)

        open_page(browser, server, f"{authorize}&client_id=nobody-registered-this")
        check_page(browser, "an application's error", data, problems)

        started = json.loads(subprocess.run(
            ["curl", "-sS", "-d", f"client_id={client_id}&scope=openid", f"{server.origin}/oauth/device_authorization"],
            capture_output=True, text=True, check=True, timeout=30).stdout)
        open_page(browser, server, "/device")
        type_into(browser, "user-code", started["user_code"])
        find(browser, "device-continue").click()
        wait(browser, lambda d: started["user_code"] in d.find_element(By.TAG_NAME, "body").text,
             what="the device approval page")
        check_page(browser, "device approval", data + [started["user_code"]], problems)

        # Forward auth's 403 page, as a proxy asks for it (Accept-Language passed on).
        browser.execute_cdp_cmd("Network.enable", {})
        browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {
            "X-Forwarded-Proto": "http", "X-Forwarded-Host": "team.localhost", "X-Forwarded-Uri": "/"}})
        try:
            open_page(browser, server, "/forward-auth")
            wait(browser, lambda d: "team.localhost" in d.find_element(By.TAG_NAME, "body").text,
                 what="the no-access page")
            check_page(browser, "forward auth's no-access page", data, problems)
        finally:
            browser.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {}})

        open_page(browser, server, "/oauth/logout")
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "form"), what="sign-out's confirmation")
        check_page(browser, "sign-out's confirmation", data, problems)
        find(browser, "logout-confirm").click()
        wait(browser, lambda d: not d.find_elements(By.ID, "logout-confirm"),
             what="the signed-out page")
        check_page(browser, "signed out", data, problems)

        (tmp_path / "problems.json").write_text(json.dumps(problems, indent=1, ensure_ascii=False))
        assert problems == {}, problems
    finally:
        set_language(browser, "en")
        server.stop()


WORDS = {
    # A word of each page in the language (from the catalog), so a page shown in English fails.
    "ko": {"signup": "계정", "account": "패스키", "signin": "로그인"},
    "ar": {"signup": "حساب", "account": "مفتاح المرور", "signin": "تسجيل الدخول"},
}


def test_sign_up_sign_in_account_and_a_mail_in_korean_and_arabic(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--email=optional", *relay.sesame_args()])
    try:
        for number, tag in enumerate(["ko", "ar"]):
            browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
            set_language(browser, tag)
            direction = "rtl" if tag == "ar" else "ltr"
            open_page(browser, server, "/signup")
            html = browser.find_element(By.TAG_NAME, "html")
            assert html.get_attribute("lang") == tag and html.get_attribute("dir") == direction
            assert WORDS[tag]["signup"] in find(browser, "signup-heading").text
            # Usernames stay left to right in a right-to-left page.
            assert browser.execute_script(
                "return getComputedStyle(document.getElementById('username')).direction") == "ltr"
            screenshot(browser, f"lang-{tag}-signup", 390)

            authenticator(browser)
            username = f"user{number}"
            sign_up(browser, server, username, "지민" if tag == "ko" else "ليلى")
            wait(browser, lambda d: WORDS[tag]["account"] in d.find_element(By.TAG_NAME, "main").text,
                 what="the account page in the language")
            assert browser.find_element(By.TAG_NAME, "html").get_attribute("dir") == direction

            # A mail: the address verification, in the language of the request that caused it.
            wait(browser, lambda d: find(d, "email").is_displayed(), what="the email section")
            type_into(browser, "email-address", f"{username}@example.org")
            find(browser, "email-submit").click()
            mails = wait_for_mails(browser, relay, number + 1)
            mail = mails[number][2]
            text, html_part = parts(mail)
            assert re.search(r"[0-9]{6}", text)
            assert f'lang="{tag}"' in html_part and f'dir="{direction}"' in html_part
            assert "Confirm your email address" not in mail["Subject"]
            screenshot(browser, f"lang-{tag}-account", 390)
            screenshot(browser, f"lang-{tag}-account", 1280)

            # The mail as a person's mail program shows it (its HTML part, in this browser).
            browser.get("data:text/html;charset=utf-8;base64," + base64.b64encode(html_part.encode()).decode())
            screenshot(browser, f"lang-{tag}-mail", 390)

            # Signed out, without the authenticator (it would answer the page's AutoFill request at once).
            browser.remove_virtual_authenticator()
            browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
            open_page(browser, server, "/signin")
            wait(browser, lambda d: WORDS[tag]["signin"] in find(d, "signin-heading").text,
                 what="the sign-in page in the language")
            screenshot(browser, f"lang-{tag}-signin", 390)
    finally:
        set_language(browser, "en")
        server.stop()
        relay.stop()


# A character of each script, so a prompt left in English fails.
SCRIPT = {"ko": re.compile("[\uac00-\ud7a3]"), "ar": re.compile("[\u0600-\u06ff]")}


def test_the_keychain_prompt_in_korean_and_arabic(sesame_bin, tmp_path, second_site):
    """The extension's prompt in a Chromium whose language is Korean, then Arabic (`--lang`): its words come from the
    extension's `_locales`, which the catalog generates."""
    from browser_keychain_fixtures import KeychainBrowser
    from test_browser_keychain import press, prompt_parts, wait_prompt
    from selenium.webdriver.common.keys import Keys

    for tag in ("ko", "ar"):
        (tmp_path / tag).mkdir()
        running = KeychainBrowser(sesame_bin, tmp_path / tag, lang=tag)
        try:
            driver = running.driver
            driver.get(second_site.origin + "/")
            type_into(driver, "username", f"user-{tag}")
            find(driver, "register").click()
            wait_prompt(driver)
            words = " ".join(part["text"] for part in prompt_parts(driver))
            assert SCRIPT[tag].search(words), f"the prompt in {tag}: {words!r}"
            screenshot_prompt(driver, f"lang-{tag}-keychain-prompt")
            press(driver, Keys.ESCAPE)
        finally:
            running.stop()


def screenshot_prompt(driver, name):
    from test_browser_flows import SCREENSHOTS
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
    (SCREENSHOTS / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
