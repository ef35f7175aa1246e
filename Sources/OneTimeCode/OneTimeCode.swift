/// One-time codes.
