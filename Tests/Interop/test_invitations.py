"""Sign-up by invitation end to end (issue 30): a real `sesame serve` with `--sign-up=invite-only`, mailing through
aiosmtpd on loopback (Tests/SMTPTests/Resources/relay.py: STARTTLS with its own CA, AUTH), Chromium with a virtual
authenticator. The operator runs `sesame invites create --email`; the delivered mail is read with Python's `email`
parser; its link opens the sign-up page in Chromium, where a passkey makes the account. The page says when sign-up
needs an invitation, and the spent link gets the one answer every unusable invitation gets."""

import re

from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, api, authenticator, browser, find, message, open_page, signed_in, type_into, wait)
from test_email_address import parts, wait_for_mails
from test_mail import Relay


def test_a_mailed_invitation_signs_up_once_with_a_passkey(sesame_bin, tmp_path, browser):
    relay = Relay(tmp_path, "starttls")
    server = Server(sesame_bin, tmp_path, extra_args=["--sign-up=invite-only", *relay.sesame_args()])
    try:
        # Without an invitation the page says so and offers no form.
        open_page(browser, server, "/signup")
        wait(browser, lambda d: "by invitation only" in message(d), what="the invitation-only notice")
        assert not find(browser, "signup-form").is_displayed()

        # The command reads the server's settings (here its flags): the link is on the server's origin.
        # The invitation puts the person in the group `family` (made first: an unknown group is refused).
        server.admin("groups", "add", "family", "--name", "Family")
        printed = server.admin("invites", "create", "--email", "zoe@example.org", "--expires", "2d",
                               "--groups", "family", f"--origin={server.origin}")
        link = re.search(r"(http://localhost:\d+/signup#invitation=[0-9a-f]{16}\.[A-Za-z0-9_-]{43})", printed).group(1)
        invitation_id = link.split("=", 1)[1].split(".", 1)[0]

        assert link.startswith(server.origin + "/signup#")
        [(sender, recipients, mail)] = wait_for_mails(browser, relay, 1)
        assert (sender, recipients) == ("sesame@example.org", "zoe@example.org")
        assert mail["Subject"] == "You're invited to Sesame"
        assert mail.get_content_type() == "multipart/alternative"
        text, html = parts(mail)
        assert link in text and link in html.replace("&amp;", "&")

        # The link: the sign-up page, told it was invited, and a passkey makes the account.
        authenticator(browser)
        browser.get(link)
        wait(browser, lambda d: find(d, "signup-invited").is_displayed(), what="the invited note")
        assert find(browser, "signup-form").is_displayed()
        type_into(browser, "username", "zoe")
        type_into(browser, "display-name", "Zoe")
        find(browser, "signup-button").click()
        signed_in(browser, server)
        shown = server.user("zoe")
        assert "zoe" in shown and "family" in shown
        assert "zoe" in server.admin("groups", "show", "family")
        listed = server.admin("invites", "list")
        assert f"{invitation_id} used" in listed

        # Spent: the same link gets the one answer, and nothing is created.
        token = link.split("#invitation=", 1)[1]
        status, body = api(browser, "POST", "/api/registration/options", {"username": "zoe2", "invitation": token})
        assert (status, body["error"]) == (403, "invitation_invalid")
        audit = server.admin("audit")
        for kind in ["invitation.created", "invitation.mailed", "invitation.used"]:
            assert kind in audit
    finally:
        server.stop()
        relay.stop()
