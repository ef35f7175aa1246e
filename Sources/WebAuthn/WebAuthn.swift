/// WebAuthn relying-party library.
