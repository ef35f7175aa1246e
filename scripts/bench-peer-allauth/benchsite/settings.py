"""Django settings for the peer that scripts/bench-server measures beside Sesame: django-allauth's passkey sign-in
through its headless JSON API (the `app` client, X-Session-Token), served by gunicorn on loopback, on SQLite.

Production-like where it costs CPU: DEBUG off, Django's default middleware stack, database sessions (Django's
default session engine), allauth's rate limits on (in Django's default per-process memory cache; the load sends a
fresh X-Forwarded-For address per request, as it does to `sesame serve --trust-forwarded-for`), origin and RP ID
checked by python-fido2 as in any deployment (no insecure-origin switch). SQLite in WAL mode with synchronous =
NORMAL, as Sesame runs it. The database path and secret key come from the environment bench-server sets."""

import os

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
SECRET_KEY = os.environ["BENCH_ALLAUTH_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["localhost"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "allauth",
    "allauth.account",
    "allauth.mfa",
    "allauth.headless",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "benchsite.urls"
WSGI_APPLICATION = "benchsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["BENCH_ALLAUTH_DATABASE"],
        "OPTIONS": {
            # Two worker processes write the same file: WAL lets readers run beside the writer, IMMEDIATE write
            # transactions avoid upgrade deadlocks, and a writer waits up to 20 s for the lock instead of failing.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }
}

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Accounts have a username and no password (the passkey is their only credential); no e-mail step.
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*"]
ACCOUNT_EMAIL_VERIFICATION = "none"

# Passkey sign-in ("webauthn login"): discoverable credentials, user verification required.
MFA_SUPPORTED_TYPES = ["webauthn"]
MFA_PASSKEY_LOGIN_ENABLED = True

HEADLESS_ONLY = True
HEADLESS_CLIENTS = ("app",)
HEADLESS_FRONTEND_URLS = {}

# One proxy in front (the load generator): the client address is the last X-Forwarded-For entry.
ALLAUTH_TRUSTED_PROXY_COUNT = 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
}
