"""The account page's Language section in Chromium: the page comes in the browser's language, a saved choice
outranks it (the page reloads in the language chosen, mirrored for Arabic with codes left to right), and "your
browser's choice" gives the decision back to Accept-Language."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from test_browser_flows import (  # noqa: F401  (fixtures)
    authenticator, browser, find, server, sign_up, wait)


def set_language(driver, tag):
    agent = driver.execute_script("return navigator.userAgent")
    driver.execute_cdp_cmd("Network.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": tag})


def ready(driver):
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready === 'true'"), what="the account page")


def save_language(driver, value):
    Select(find(driver, "language-select")).select_by_value(value)
    driver.execute_script("window.beforeSaving = true")
    find(driver, "language-save").click()
    # Saving reloads the page: a new document, without the mark, whose scripts are done.
    wait(driver, lambda d: d.execute_script("return window.beforeSaving !== true && document.readyState === 'complete'"),
         what="the reload")
    ready(driver)


def test_the_saved_language_outranks_the_browsers(server, browser):
    authenticator(browser)
    sign_up(browser, server, "mina", "Mina")
    set_language(browser, "ko")
    browser.get(server.origin + "/account")
    ready(browser)
    html = browser.find_element(By.TAG_NAME, "html")
    assert html.get_attribute("lang") == "ko" and html.get_attribute("dir") == "ltr"
    assert find(browser, "account-heading").text == "내 계정"
    assert "로그인되어 있습니다" in find(browser, "who").text
    # The shipped languages in their own names, after "your browser's choice", which is selected.
    select = Select(find(browser, "language-select"))
    names = [option.text for option in select.options]
    assert names[0] == "브라우저 설정에 따름" and select.first_selected_option.get_attribute("value") == ""
    assert {"English", "한국어", "日本語", "Deutsch", "Español", "العربية"} <= set(names[1:])

    save_language(browser, "ar")
    html = browser.find_element(By.TAG_NAME, "html")
    assert html.get_attribute("lang") == "ar" and html.get_attribute("dir") == "rtl"
    assert find(browser, "account-heading").text == "حسابك"
    assert Select(find(browser, "language-select")).first_selected_option.get_attribute("value") == "ar"
    # The page mirrors; codes and numbers stay left to right.
    assert browser.execute_script("return getComputedStyle(document.body).direction") == "rtl"
    for field in ("sms-phone", "totp-code", "new-password"):
        assert browser.execute_script(f"return getComputedStyle(document.getElementById('{field}')).direction") \
            == "ltr", field

    # Back to the browser's choice: Korean again.
    save_language(browser, "")
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ko"
    assert find(browser, "account-heading").text == "내 계정"
