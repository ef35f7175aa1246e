"""`sesame otp` command line: exit statuses, QR files (decoded with zbarimg), SMS messages."""

import os
import shutil
import stat
import subprocess

import pyotp
import pytest

from test_otp_helpers import new_key, run

SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"  # RFC 6238's SHA-1 seed, "12345678901234567890"


def test_rfc6238_vector_through_the_cli():
    # RFC 6238 Appendix B, SHA-1 at T = 59: 94287082.
    result = run("code", SECRET, "--digits", "8", "--at", "59")
    assert result.stdout.splitlines() == ["94287082", "valid for 1 more second (step 1)"]


@pytest.mark.parametrize(
    "args,status",
    [
        (["verify", SECRET, "94287082", "--digits", "8", "--at", "59"], 0),
        (["verify", SECRET, "94287083", "--digits", "8", "--at", "59"], 1),
        (["verify", SECRET, "9428708", "--digits", "8", "--at", "59"], 1),
        (["verify", SECRET, "94287082", "--digits", "8", "--at", "59", "--last-step", "1"], 1),
        (["verify", "GEZDG1", "123456"], 2),
        (["verify", SECRET, "123456", "--window", "11"], 2),
        (["verify", SECRET, "123456", "--at", "yesterday"], 2),
        (["verify", "otpauth://totp/x:a?secret=" + SECRET + "&issuer=y", "123456"], 2),  # issuer mismatch
        (["code", "otpauth://totp/x?secret=" + SECRET, "--digits", "8"], 2),
        (["new", "--issuer", "example.com", "--account", "a", "--digits", "9"], 2),
        (["new", "--issuer", "example.com", "--account", "a", "--qr", "/tmp/x.gif"], 2),
        (["new", "--issuer", "example.com", "--account", "a", "--secret-bits", "80"], 2),
        (["new", "--issuer", "example.com", "--account", "a", "--secret-bits", "8000000000000000"], 2),
        (["new", "--issuer", "example.com", "--account", "a:b"], 2),
        (["sms", "--domain", "exa mple.com", "--code", "1"], 2),
    ],
)
def test_exit_status(args, status):
    result = run(*args)
    assert result.returncode == status, result.stdout + result.stderr


def test_errors_do_not_echo_the_secret():
    # A secret one character short of valid Base32 must not be echoed back in the error.
    result = run("code", SECRET[:-1] + "1")
    assert result.returncode == 2
    assert SECRET[:10] not in result.stderr and SECRET[:10] not in result.stdout


def test_sms_message():
    result = run("sms", "--domain", "example.com", "--code", "123456", "Your code is 123456.")
    assert result.returncode == 0
    assert result.stdout == "Your code is 123456.\n\n@example.com #123456\n"
    embedded = run("sms", "--domain", "example.com", "--code", "123456", "--embedded", "pay.example", "Code:")
    assert embedded.stdout.splitlines()[-1] == "@example.com #123456 @pay.example"


@pytest.mark.skipif(shutil.which("zbarimg") is None, reason="zbarimg (Debian zbar-tools) is not installed")
@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_qr_file_decodes_to_the_link(tmp_path, suffix):
    if suffix == "svg" and shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert (Debian librsvg2-bin) is not installed; it rasterises the SVG for zbarimg")
    image = tmp_path / f"setup.{suffix}"
    _, uri, _ = new_key(issuer="example.com", account="alice@example.com", qr=str(image), qr_level="Q")
    assert stat.S_IMODE(os.stat(image).st_mode) == 0o600  # the image holds the secret
    if suffix == "svg":
        png = tmp_path / "setup.png"
        subprocess.run(["rsvg-convert", "--format=png", "-o", str(png), str(image)], check=True)
        image = png
    decoded = subprocess.run(["zbarimg", "--raw", "-q", str(image)], capture_output=True, text=True, check=True)
    assert decoded.stdout.rstrip("\n") == uri
    assert isinstance(pyotp.parse_uri(decoded.stdout.strip()), pyotp.TOTP)


def test_argument_syntax_errors_exit_2():
    """Every sesame command reports bad usage with status 2, including errors the argument parser finds."""
    import os
    import subprocess

    binary = os.environ["SESAME_BIN"]
    for argv in (["otp", "code"], ["otp", "new", "--bogus"], ["no-such-command"]):
        result = subprocess.run([binary, *argv], capture_output=True, text=True)
        assert result.returncode == 2, (argv, result.returncode, result.stderr)
        assert result.stderr.strip(), argv
