import Testing
@testable import WebAuthn
