"""Delivery through Debian's Postfix: a private instance (its own configuration, queue and data directories, run
with `postfix -c DIR`, listening on a free loopback port only, `inet_interfaces = loopback-only`) that delivers
`example.net` to a Maildir through a virtual mailbox. `sesame serve` relays to it (plain SMTP on loopback); the test
reads the delivered mail from the Maildir with Python's `email` package and follows its link in
Chromium.

Postfix logs a fatal start-up error to syslog before its own log file is open, and /dev/log is missing in a
container: `maillog_file` outside `maillog_file_prefixes` (`/var` by default) made an earlier try exit silently.
Here `maillog_file_prefixes = DIR` and the log is read when Postfix does not come up. Needs root (Postfix's master
runs as root and drops to `mail_owner`), as in CI."""

import email
import email.policy
import os
import pathlib
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import free_port
from test_browser_flows import (  # noqa: F401  (fixtures)
    Server, authenticator, browser, find, message, sign_up, type_into, wait)

MASTER = """\
{listen} inet n - n - - smtpd
pickup    unix  n - n 60 1 pickup
cleanup   unix  n - n - 0 cleanup
qmgr      unix  n - n 300 1 qmgr
rewrite   unix  - - n - - trivial-rewrite
bounce    unix  - - n - 0 bounce
defer     unix  - - n - 0 bounce
trace     unix  - - n - 0 bounce
verify    unix  - - n - 1 verify
flush     unix  n - n 1000? 0 flush
proxymap  unix  - - n - - proxymap
smtp      unix  - - n - - smtp
relay     unix  - - n - - smtp
showq     unix  n - n - - showq
error     unix  - - n - - error
retry     unix  - - n - - error
discard   unix  - - n - - discard
virtual   unix  - n n - - virtual
anvil     unix  - - n - 1 anvil
scache    unix  - - n - 1 scache
postlog   unix-dgram n - n - 1 postlogd
"""


class Postfix:
    """A private Postfix instance in a directory of its own, stopped by `stop()`."""

    def __init__(self, recipients):
        if os.geteuid() != 0:
            pytest.skip("Postfix's master must start as root (CI runs the suite as root)")
        if not shutil.which("postfix"):
            pytest.fail("Debian's postfix is required; scripts/test installs it")
        owner = pwd.getpwnam("postfix")
        # Postfix's daemons run as `postfix`: every directory on the way must be theirs to enter.
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="sesame-postfix-"))
        self.dir.chmod(0o755)
        self.conf, queue, data, self.mail = (self.dir / name for name in ("conf", "queue", "data", "mail"))
        for path in (self.conf, queue, data, self.mail):
            path.mkdir()
        os.chown(data, owner.pw_uid, owner.pw_gid)
        os.chown(self.mail, owner.pw_uid, owner.pw_gid)
        self.port = free_port()
        self.log = self.dir / "maillog"
        (self.conf / "vmailbox").write_text("".join(f"{r} {r.split('@')[1]}/{r.split('@')[0]}/\n" for r in recipients))
        (self.conf / "main.cf").write_text(f"""\
compatibility_level = 3.6
queue_directory = {queue}
data_directory = {data}
mail_owner = postfix
setgid_group = postdrop
inet_interfaces = loopback-only
inet_protocols = ipv4
myhostname = mail.example.test
mydestination =
mynetworks = 127.0.0.0/8
relay_domains =
virtual_mailbox_domains = example.net
virtual_mailbox_base = {self.mail}
virtual_mailbox_maps = texthash:{self.conf / "vmailbox"}
virtual_uid_maps = static:{owner.pw_uid}
virtual_gid_maps = static:{owner.pw_gid}
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
maillog_file_prefixes = {self.dir}
maillog_file = {self.log}
""")
        (self.conf / "master.cf").write_text(MASTER.format(listen=f"127.0.0.1:{self.port}"))
        started = subprocess.run(["postfix", "-c", str(self.conf), "start"], capture_output=True, text=True,
                                 timeout=60)
        deadline = time.time() + 30
        while not self.listening():
            if time.time() > deadline:
                log = self.log.read_text() if self.log.exists() else "(no log)"
                self.stop()
                pytest.fail(f"postfix did not start ({started.returncode}): {started.stderr}\n{log[-2000:]}")
            time.sleep(0.1)

    def listening(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def delivered(self, recipient):
        """The messages delivered to the recipient's Maildir (`new/`, and `cur/` once a reader moved them), parsed,
        oldest first. Maildir delivery writes to `tmp/` and renames into `new/`, so a file there is complete."""
        local, domain = recipient.split("@")
        box = self.mail / domain / local
        files = [path for sub in ("new", "cur") if (box / sub).is_dir() for path in (box / sub).iterdir()]
        # Maildir names begin with the delivery time in seconds, then a per-delivery unique part.
        files.sort(key=lambda path: (path.stat().st_mtime, path.name))
        return [email.message_from_bytes(path.read_bytes(), policy=email.policy.default) for path in files]

    def stop(self):
        subprocess.run(["postfix", "-c", str(self.conf), "stop"], capture_output=True, timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


def test_sesame_relays_to_postfix_and_the_delivered_link_confirms_the_address(sesame_bin, tmp_path, browser):
    postfix = Postfix(["lin@example.net"])
    server = Server(sesame_bin, tmp_path, extra_args=[
        "--email=optional", f"--smtp-url=smtp://127.0.0.1:{postfix.port}",
        "--smtp-from=Sesame <sesame@example.org>"])
    try:
        authenticator(browser)
        sign_up(browser, server, "lin", "Lin")
        wait(browser, lambda d: find(d, "email").is_displayed(), what="the email section")
        type_into(browser, "email-address", "lin@example.net")
        find(browser, "email-submit").click()

        def one_mail(_):
            got = postfix.delivered("lin@example.net")
            return got if got else None

        [mail] = wait(browser, one_mail, what="the mail in the Maildir")
        assert mail["Subject"] == "Confirm your email address for Sesame"
        assert mail["From"] == "Sesame <sesame@example.org>" and mail["To"] == "lin@example.net"
        assert mail["Message-ID"] and mail["Date"].datetime is not None
        # Postfix added its own trace: the mail went through it.
        assert "mail.example.test" in mail["Received"]
        text = mail.get_body(preferencelist=("plain",)).get_content()
        html = mail.get_body(preferencelist=("html",)).get_content()
        link = re.search(r"(http://localhost:\d+/account/email/verify#[A-Za-z0-9_-]{43})", text).group(1)
        assert link in html.replace("&amp;", "&")
        browser.get(link)
        wait(browser, lambda d: find(d, "verify-confirm").is_displayed(), what="the confirm button")
        find(browser, "verify-confirm").click()
        wait(browser, lambda d: "is confirmed" in message(d), what="the confirmation")
        assert "lin@example.net (verified)" in server.user("lin")
        assert "status=sent (delivered to maildir)" in postfix.log.read_text()
    finally:
        server.stop()
        postfix.stop()
