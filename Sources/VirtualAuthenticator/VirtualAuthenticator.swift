/// Software authenticator.
