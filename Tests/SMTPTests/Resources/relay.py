"""A real SMTP relay for SMTPTests: aiosmtpd (PyPI; scripts/test installs it) on loopback, with a CA and a server
certificate for localhost and 127.0.0.1 made here with `cryptography`, STARTTLS or TLS from the first byte, and
AUTH PLAIN/LOGIN required when --auth is given. Each accepted mail is written to --out as one file (the envelope on
the first two lines, then the message as received). Prints "READY <port> <ca.pem path>" once listening, and runs until
stdin closes, so it ends with the test that started it.
"""
import argparse, datetime, ipaddress, os, socket, ssl, sys, tempfile

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def certificates(folder):
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "SMTPTests CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = {name: os.path.join(folder, name) for name in ("ca.pem", "cert.pem", "key.pem")}
    with open(paths["ca.pem"], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths["cert.pem"], "wb") as f:
        f.write(leaf.public_bytes(serialization.Encoding.PEM))
    with open(paths["key.pem"], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths


class Sink:
    def __init__(self, out):
        self.out, self.count = out, 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        with open(os.path.join(self.out, f"{self.count:03d}.eml"), "wb") as f:
            f.write(f"{envelope.mail_from}\n{','.join(envelope.rcpt_tos)}\n".encode())
            f.write(envelope.original_content)
        return "250 2.0.0 Ok: queued as T%03d" % self.count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["starttls", "implicit"], required=True)
    parser.add_argument("--auth", help="USER:PASSWORD required before MAIL")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    paths = certificates(tempfile.mkdtemp(prefix="smtp-relay-"))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(paths["cert.pem"], paths["key.pem"])
    user, _, password = (args.auth or "").partition(":")

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user \
            and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False)

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    options = dict(hostname="127.0.0.1", port=port, server_hostname="relay.test",
                   auth_required=bool(args.auth), auth_require_tls=True,
                   authenticator=authenticator if args.auth else None)
    if args.mode == "starttls":
        controller = Controller(Sink(args.out), tls_context=context, require_starttls=True, **options)
    else:
        # aiosmtpd counts only STARTTLS as TLS when deciding to offer AUTH; this connection is TLS from its first byte.
        options["auth_require_tls"] = False
        controller = Controller(Sink(args.out), ssl_context=context, **options)
    controller.start()
    print(f"READY {port} {paths['ca.pem']}", flush=True)
    sys.stdin.read()
    controller.stop()


if __name__ == "__main__":
    main()
