"""Groups and allowed groups through a relying party no one here wrote: a Django site with mozilla-django-oidc
(django_oidc_site.py) on loopback, one process, one Chromium session.

The site creates its user from the verified `email` claim and maps the `groups` claim to Django groups and the staff
flag. Sesame registers it with `--allowed-groups family,staff`: a person in neither is sent back to the site with
`error=access_denied` (the site shows its own page and creates no user); once an operator puts them in the groups,
the same sign-in creates the user with those groups, and a removal shows at the next sign-in.
"""

import os
import re
import sqlite3
import subprocess
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By

from conftest import free_port
from test_browser_flows import (  # noqa: F401 (browser is a fixture)
    Server, api, authenticator, browser, find, open_page, screenshot, sign_up, wait)

SITE = os.path.join(os.path.dirname(__file__), "django_oidc_site.py")


class DjangoSite:
    def __init__(self, directory, port, sesame, client_id, secret):
        self.port = port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.database = str(directory / "django.sqlite")
        self.log = open(directory / "django.log", "w")
        env = dict(os.environ, SESAME_ORIGIN=sesame.origin, DJANGO_PORT=str(self.port), OIDC_CLIENT_ID=client_id,
                   OIDC_CLIENT_SECRET=secret, DJANGO_DB=self.database)
        self.process = subprocess.Popen([sys.executable, SITE], env=env, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        assert self.process.stdout.readline().strip() == "ready", (directory / "django.log").read_text()
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(self.origin + "/", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def users(self):
        with sqlite3.connect(self.database) as db:
            return db.execute("SELECT username, email, is_staff FROM auth_user").fetchall()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        self.log.close()


def verify_email(driver, server, address):
    """Adds `address` on the signed-in account and types the code the console mail printed to the server's log."""
    status, _ = api(driver, "PUT", "/api/account/email", {"address": address})
    assert status == 202

    def code(_):
        server.log.flush()
        found = re.findall(r"Your code: ([0-9]{6})", server.log_path.read_text())
        return found[-1] if found else None

    status, body = api(driver, "POST", "/api/account/email/confirm", {"code": wait(driver, code, what="the mail")})
    assert status == 200, body


def sign_in_at(driver, site):
    driver.get(site.origin + "/oidc/authenticate/")
    wait(driver, lambda d: d.current_url.startswith(site.origin + "/")
         and not d.current_url.startswith(site.origin + "/oidc/"), what="back at the Django site")


def test_django_site_maps_groups_and_is_refused_outside_them(sesame_bin, tmp_path, browser):
    server = Server(sesame_bin, tmp_path, extra_args=["--email=optional"])
    site = None
    try:
        server.admin("groups", "add", "family", "--name", "Family")
        server.admin("groups", "add", "staff")
        port = free_port()
        out = server.admin("clients", "add", "--name", "Django site", "--redirect-uri",
                           f"http://127.0.0.1:{port}/oidc/callback/", "--first-party",
                           "--allowed-groups", "family,staff")
        fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
        client_id, secret = fields["client_id"], fields["client_secret"].split("  ")[0]
        assert "allowed groups: family, staff" in server.admin("clients", "show", client_id)
        site = DjangoSite(tmp_path, port, server, client_id, secret)

        authenticator(browser)
        sign_up(browser, server, "ada", "Ada Lovelace")
        verify_email(browser, server, "ada@example.org")

        # In neither allowed group: Sesame sends her back with error=access_denied, the library fails the sign-in
        # to the site's own page, and no Django user exists.
        sign_in_at(browser, site)
        assert browser.current_url == site.origin + "/denied"
        assert find(browser, "denied").text == "Sesame did not let you in."
        assert site.users() == []
        assert "app.access_denied" in server.admin("audit", "--user", "ada")

        # An operator puts her in both groups: the same sign-in now creates her from the verified email, with the
        # groups claim as Django groups and `staff` as staff.
        server.admin("users", "groups", "add", "ada", "family")
        server.admin("users", "groups", "add", "ada", "staff")
        sign_in_at(browser, site)
        assert browser.current_url == site.origin + "/"
        assert find(browser, "email").text == "ada@example.org"
        assert find(browser, "groups").text == "family,staff"
        assert find(browser, "staff").text == "staff"
        assert site.users() == [("ada", "ada@example.org", 1)]

        # The account page shows her groups and the apps she may use (read-only).
        open_page(browser, server, "/account")
        # The page lists them as the page's language writes a list ("family and staff" in English).
        wait(browser, lambda d: all(g in find(d, "group-summary").text for g in ("family", "staff")),
             what="the groups")
        apps = browser.find_elements(By.CSS_SELECTOR, "#available-app-list li .title")
        assert [app.text for app in apps] == ["Django site"]
        screenshot(browser, "account-groups", 1280)

        # Taken out of staff: the next sign-in updates the user (still allowed through family).
        server.admin("users", "groups", "remove", "ada", "staff")
        sign_in_at(browser, site)
        assert find(browser, "groups").text == "family"
        assert find(browser, "staff").text == "member"
        assert site.users() == [("ada", "ada@example.org", 0)]
    finally:
        if site:
            site.stop()
        server.stop()
