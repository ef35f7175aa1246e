"""A small Django site that signs its people in with Sesame through mozilla-django-oidc (test_django_oidc.py runs it
as one process on loopback).

Configured from the environment: SESAME_ORIGIN, DJANGO_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, DJANGO_DB. Its
authentication backend is mozilla-django-oidc's, told two things the library leaves to each site: the user is
created from the verified `email` claim (UserInfo), and the `groups` claim maps to Django groups of the same names,
with `staff` making the user staff. Pages: `/` (who is signed in, their groups, staff or not), `/denied` (where the
library sends a failed sign-in, `error=access_denied` included).
"""

import os
import sys

import django
from django.conf import settings

ORIGIN = os.environ["SESAME_ORIGIN"]
PORT = int(os.environ["DJANGO_PORT"])

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["127.0.0.1"],
    SECRET_KEY="django-oidc-site-" + os.environ["OIDC_CLIENT_ID"],
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=[
        "django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions", "mozilla_django_oidc",
    ],
    MIDDLEWARE=[
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
    ],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["DJANGO_DB"]}},
    AUTHENTICATION_BACKENDS=[__name__ + ".SesameBackend"],
    SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies",
    OIDC_RP_CLIENT_ID=os.environ["OIDC_CLIENT_ID"],
    OIDC_RP_CLIENT_SECRET=os.environ["OIDC_CLIENT_SECRET"],
    OIDC_OP_AUTHORIZATION_ENDPOINT=ORIGIN + "/oauth/authorize",
    OIDC_OP_TOKEN_ENDPOINT=ORIGIN + "/oauth/token",
    OIDC_OP_USER_ENDPOINT=ORIGIN + "/oauth/userinfo",
    OIDC_OP_JWKS_ENDPOINT=ORIGIN + "/oauth/jwks",
    OIDC_RP_SIGN_ALGO="ES256",
    OIDC_RP_SCOPES="openid email profile groups",
    OIDC_USE_PKCE=True,
    LOGIN_REDIRECT_URL="/",
    LOGIN_REDIRECT_URL_FAILURE="/denied",
)
django.setup()

from django.contrib.auth.models import Group  # noqa: E402  (after setup)
from django.http import HttpResponse  # noqa: E402
from django.urls import include, path  # noqa: E402
from mozilla_django_oidc.auth import OIDCAuthenticationBackend  # noqa: E402


class SesameBackend(OIDCAuthenticationBackend):
    """Users by verified email; Django groups and the staff flag from the `groups` claim."""

    def verify_claims(self, claims):
        return bool(claims.get("email")) and claims.get("email_verified") is True

    def create_user(self, claims):
        user = self.UserModel.objects.create_user(claims["preferred_username"], email=claims["email"])
        return self.update_user(user, claims)

    def update_user(self, user, claims):
        slugs = [slug for slug in claims.get("groups", []) if isinstance(slug, str)]
        user.groups.set([Group.objects.get_or_create(name=slug)[0] for slug in slugs])
        user.is_staff = "staff" in slugs
        user.first_name = claims.get("name", "")
        user.save()
        return user


def home(request):
    user = request.user
    if not user.is_authenticated:
        return HttpResponse('<!doctype html><title>Site</title><a id="login" href="/oidc/authenticate/">Sign in</a>')
    groups = ",".join(sorted(group.name for group in user.groups.all()))
    return HttpResponse(
        "<!doctype html><title>Site</title>"
        f'<p id="who">{user.username}</p><p id="email">{user.email}</p><p id="groups">{groups}</p>'
        f'<p id="staff">{"staff" if user.is_staff else "member"}</p>')


def denied(request):
    return HttpResponse('<!doctype html><title>Denied</title><p id="denied">Sesame did not let you in.</p>')


urlpatterns = [path("", home), path("denied", denied), path("oidc/", include("mozilla_django_oidc.urls"))]


if __name__ == "__main__":
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0, interactive=False)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    server = make_server("127.0.0.1", PORT, get_wsgi_application(), server_class=ThreadingWSGIServer,
                         handler_class=Quiet)
    print("ready", flush=True)
    server.serve_forever()
