"""A real SMTP relay for SMTPTests: aiosmtpd (PyPI; scripts/test installs it) on loopback, with a CA and a server
certificate for localhost and 127.0.0.1 made here with `cryptography`, STARTTLS or TLS from the first byte, and
AUTH PLAIN/LOGIN required when --auth is given; or --mode plain (no TLS, for a server on the same machine, which
needs none). Each accepted mail is written to --out as one file (the envelope on the first two lines, then the
message as received). Prints "READY <port> <ca.pem path>" once listening, and runs until stdin closes, so it ends with
the test that started it.

Faults, for the outbox's tests: each line on stdin is a command, answered by one line "OK ..." on stdout:
  accept        answer every mail 250 (again), listening on the same port
  defer N       answer the next N mails 451 (try again later) at the end of DATA
  refuse        answer every mail 550 at the end of DATA
  hang          take connections and never answer (not even the greeting); they are held until the next command
  stop          listen no more: connections are refused
  status        "OK connections=N" (connections taken while hanging) "delivered=M attempts=K"
With --log, every end of DATA is a line "<code> <Message-ID>" there.
"""
import argparse, datetime, email.parser, email.policy, ipaddress, os, socket, ssl, sys, tempfile, threading

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
    def __init__(self, out, log=None):
        self.out, self.count, self.log = out, 0, log
        self.defers, self.refuse, self.attempts = 0, False, 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        headers = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(envelope.original_content)
        with self.lock:
            self.attempts += 1
            if self.refuse:
                answer = "550 5.7.1 refused by the test relay"
            elif self.defers > 0:
                self.defers -= 1
                answer = "451 4.3.0 try again later"
            else:
                self.count += 1
                with open(os.path.join(self.out, f"{self.count:03d}.eml"), "wb") as f:
                    f.write(f"{envelope.mail_from}\n{','.join(envelope.rcpt_tos)}\n".encode())
                    f.write(envelope.original_content)
                answer = "250 2.0.0 Ok: queued as T%03d" % self.count
            if self.log:
                with open(self.log, "a") as f:
                    f.write(f"{answer[:3]} {headers.get('Message-ID', '-')}\n")
        return answer


class Hang:
    """A listener that takes connections and never says a word, holding them until closed."""

    def __init__(self, port):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))
        self.listener.listen(64)
        self.held, self.closed = [], False
        threading.Thread(target=self.take, daemon=True).start()

    def take(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            if self.closed:
                connection.close()
                return
            self.held.append(connection)

    def close(self):
        # shutdown wakes the thread blocked in accept (close alone leaves the socket listening until accept returns).
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.closed = True
        self.listener.close()
        for connection in self.held:
            connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["starttls", "implicit", "plain"], required=True)
    parser.add_argument("--auth", help="USER:PASSWORD required before MAIL")
    parser.add_argument("--out", required=True)
    parser.add_argument("--log", help="a line per end of DATA: the answer's code and the Message-ID")
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
    sink = Sink(args.out, args.log)

    def listen():
        if args.mode == "starttls":
            controller = Controller(sink, tls_context=context, require_starttls=True, **options)
        elif args.mode == "implicit":
            # aiosmtpd counts only STARTTLS as TLS when deciding to offer AUTH; this one is TLS from its first byte.
            controller = Controller(sink, ssl_context=context, **dict(options, auth_require_tls=False))
        else:
            controller = Controller(sink, **options)
        controller.start()
        return controller

    controller, hang = listen(), None
    print(f"READY {port} {paths['ca.pem']}", flush=True)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if hang and command != "status":
            hang.close()
            hang = None
        if command in ("hang", "stop") and controller:
            controller.stop()
            controller = None
        if command == "hang":
            hang = Hang(port)
        elif command in ("accept", "defer", "refuse"):
            with sink.lock:
                sink.refuse, sink.defers = command == "refuse", int(argument or 0) if command == "defer" else 0
            if not controller:
                controller = listen()
        print(f"OK connections={len(hang.held) if hang else 0} delivered={sink.count} attempts={sink.attempts}",
              flush=True)
    if hang:
        hang.close()
    if controller:
        controller.stop()


if __name__ == "__main__":
    main()
