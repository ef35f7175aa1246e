"""A tiny relying-party web server for the Chromium tests: serves the test page and its script, hands out
WebAuthn options with fresh random challenges, and passes the browser's responses to verifier callables (the
tests plug in `sesame verify`). One user, state in memory, loopback only. Standard library only."""

import base64
import json
import os
import pathlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = pathlib.Path(__file__).resolve().parent
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/app.js": ("app.js", "text/javascript; charset=utf-8")}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class RelyingPartyServer:
    """Serves http://localhost:PORT with RP ID `localhost`.

    `verify_registration(response: dict, challenge: str, require_uv: bool) -> dict` and
    `verify_authentication(response: dict, challenge: str, credential: dict, require_uv: bool) -> dict` return the
    verifier's JSON result; a result with `"ok": true` must carry `credentialId`, `credentialPublicKey` and
    `signCount`, which are kept as the registered credential."""

    def __init__(self, port: int, verify_registration, verify_authentication):
        self.port = port
        self.origin = f"http://localhost:{port}"
        self.rp_id = "localhost"
        self.verify_registration = verify_registration
        self.verify_authentication = verify_authentication
        self.user_id = os.urandom(16)
        self.credentials = []  # verified registrations: {credentialId, credentialPublicKey, signCount}
        self.pending = {}  # ceremony -> (challenge, require_uv); each challenge is used once
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    # Ceremony steps -----------------------------------------------------------------------------------------

    def registration_options(self, params: dict) -> dict:
        challenge = b64url(os.urandom(32))
        uv = params.get("userVerification", "preferred")
        with self.lock:
            self.pending["registration"] = (challenge, uv == "required")
        return {
            "rp": {"id": self.rp_id, "name": "Sesame browser test"},
            "user": {"id": b64url(self.user_id), "name": "alice", "displayName": "Alice"},
            "challenge": challenge,
            "pubKeyCredParams": [{"type": "public-key", "alg": -7}, {"type": "public-key", "alg": -8},
                                 {"type": "public-key", "alg": -257}],
            "timeout": 30000,
            "excludeCredentials": [{"type": "public-key", "id": c["credentialId"]} for c in self.credentials],
            "authenticatorSelection": {
                "residentKey": params.get("residentKey", "discouraged"),
                "requireResidentKey": params.get("residentKey") == "required",
                "userVerification": uv,
            },
            "attestation": params.get("attestation", "direct"),
        }

    def authentication_options(self, params: dict) -> dict:
        challenge = b64url(os.urandom(32))
        uv = params.get("userVerification", "preferred")
        with self.lock:
            self.pending["authentication"] = (challenge, uv == "required")
        allow = [] if params.get("discoverable") else [
            {"type": "public-key", "id": c["credentialId"]} for c in self.credentials]
        return {"challenge": challenge, "rpId": self.rp_id, "allowCredentials": allow, "userVerification": uv,
                "timeout": 30000}

    def finish_registration(self, response: dict) -> dict:
        with self.lock:
            challenge, require_uv = self.pending.pop("registration", (None, False))
        if challenge is None:
            return {"ok": False, "error": "noPendingCeremony"}
        result = self.verify_registration(response, challenge, require_uv)
        if result.get("ok"):
            with self.lock:
                self.credentials.append({k: result[k] for k in ("credentialId", "credentialPublicKey", "signCount")})
        return result

    def finish_authentication(self, response: dict) -> dict:
        with self.lock:
            challenge, require_uv = self.pending.pop("authentication", (None, False))
            credential = next((c for c in self.credentials if c["credentialId"] == response.get("id")), None)
        if challenge is None or credential is None:
            return {"ok": False, "error": "noPendingCeremony" if challenge is None else "unknownCredential"}
        result = self.verify_authentication(response, challenge, credential, require_uv)
        if result.get("ok"):
            with self.lock:
                credential["signCount"] = result["signCount"]
        return result

    # HTTP ----------------------------------------------------------------------------------------------------

    def _handler(self):
        server = self
        routes = {
            "/registration/options": server.registration_options,
            "/registration/verify": server.finish_registration,
            "/authentication/options": server.authentication_options,
            "/authentication/verify": server.finish_authentication,
        }

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def _send(self, status, body: bytes, content_type: str):
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                if self.path not in STATIC:
                    return self._send(404, b"not found", "text/plain")
                name, content_type = STATIC[self.path]
                self._send(200, (HERE / name).read_bytes(), content_type)

            def do_POST(self):
                route = routes.get(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                if route is None or length > 1 << 20:
                    return self._send(404, b"{}", "application/json")
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                    reply = route(body)
                except Exception as error:  # report to the page, which reports to the test
                    reply = {"ok": False, "error": f"server: {type(error).__name__}: {error}"}
                self._send(200, json.dumps(reply).encode(), "application/json")

        return Handler
