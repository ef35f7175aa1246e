import Testing
@testable import VirtualAuthenticator
