"""`sesame mail test` against a real SMTP relay: aiosmtpd (PyPI), started by Tests/SMTPTests/Resources/relay.py with
a CA of its own, STARTTLS or TLS from the first byte, AUTH required. The mail it receives is read back with Python's
own `email` parser, as a mail client would."""

import email
import email.policy
import pathlib
import subprocess

import pytest

RELAY = pathlib.Path(__file__).resolve().parents[1] / "SMTPTests" / "Resources" / "relay.py"


class Relay:
    def __init__(self, tmp_path, mode):
        self.out = tmp_path / f"relay-{mode}"
        self.out.mkdir()
        self.process = subprocess.Popen(
            ["python3", str(RELAY), "--mode", mode, "--auth", "sesame:correct horse battery", "--out", str(self.out)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        words = self.process.stdout.readline().split()
        assert len(words) == 3 and words[0] == "READY", "relay.py did not start: aiosmtpd is needed (scripts/test)"
        self.port, self.ca = int(words[1]), words[2]
        self.tmp_path = tmp_path

    def sesame_args(self):
        """The settings that make `sesame serve` mail through this relay (STARTTLS with its CA, AUTH with the password
        from a 0600 file)."""
        password = self.tmp_path / "smtp-password"
        password.write_text("correct horse battery\n")
        password.chmod(0o600)
        return [f"--smtp-url=smtp://sesame@localhost:{self.port}", f"--smtp-ca-file={self.ca}",
                f"--smtp-password-file={password}", "--smtp-from=Sesame <sesame@example.org>"]

    def received(self):
        mails = []
        for path in sorted(self.out.iterdir()):
            raw = path.read_bytes()
            sender, recipients, message = raw.split(b"\n", 2)
            mails.append((sender.decode(), recipients.decode(), email.message_from_bytes(message, policy=email.policy.default)))
        return mails

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture
def relay_factory(tmp_path):
    made = []

    def make(mode):
        made.append(Relay(tmp_path, mode))
        return made[-1]

    yield make
    for relay in made:
        relay.stop()


def mail_test(sesame_bin, tmp_path, *settings, to="lin@example.net"):
    password = tmp_path / "smtp-password"
    password.write_text("correct horse battery\n")
    password.chmod(0o600)
    return subprocess.run(
        [sesame_bin, "mail", "test", "--to", to, "--database", str(tmp_path / "unused.sqlite"),
         "--smtp-from", "Sesame <sesame@example.org>", "--smtp-password-file", str(password), *settings],
        capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("mode,scheme", [("starttls", "smtp"), ("implicit", "smtps")])
def test_a_test_mail_reaches_a_real_relay_over_tls_with_a_password_from_a_file(sesame_bin, tmp_path, relay_factory,
                                                                                 mode, scheme):
    relay = relay_factory(mode)
    done = mail_test(sesame_bin, tmp_path, "--smtp-url", f"{scheme}://sesame@localhost:{relay.port}",
                     "--smtp-ca-file", relay.ca)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "sent: the relay answered 250 2.0.0 Ok: queued as T001" in done.stdout
    [(sender, recipients, message)] = relay.received()
    assert (sender, recipients) == ("sesame@example.org", "lin@example.net")
    assert message["From"] == "Sesame <sesame@example.org>" and message["To"] == "lin@example.net"
    assert message["Subject"] == "Sesame test mail"
    assert message["Message-ID"].startswith("<test-") and message["Message-ID"].endswith("@localhost>")
    assert message["Auto-Submitted"] == "auto-generated" and message["Date"].datetime is not None
    assert "to check the relay settings" in message.get_content()


def test_a_relay_the_system_does_not_trust_gets_nothing(sesame_bin, tmp_path, relay_factory):
    relay = relay_factory("starttls")
    done = mail_test(sesame_bin, tmp_path, "--smtp-url", f"smtp://sesame@localhost:{relay.port}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not sent (refused): TLS failed" in done.stdout
    assert relay.received() == []


def test_the_wrong_password_is_refused_and_not_printed(sesame_bin, tmp_path, relay_factory):
    relay = relay_factory("implicit")
    done = mail_test(sesame_bin, tmp_path, "--smtp-url", f"smtps://sesame:wrong-secret@localhost:{relay.port}",
                     "--smtp-ca-file", relay.ca, "--smtp-password-file", "")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused the credentials" in done.stdout and "535" in done.stdout
    assert "wrong-secret" not in done.stdout + done.stderr
    assert relay.received() == []


@pytest.mark.parametrize("settings,message", [
    ((), "smtp-url is not set"),
    (("--smtp-url", "http://relay.example"), "smtp-url"),
    (("--smtp-url", "smtp://relay.example", "--smtp-from", "not an address"), "smtp-from"),
])
def test_unusable_mail_settings_say_which(sesame_bin, tmp_path, settings, message):
    done = subprocess.run([sesame_bin, "mail", "test", "--to", "lin@example.net", "--database",
                           str(tmp_path / "unused.sqlite"), *settings], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr
