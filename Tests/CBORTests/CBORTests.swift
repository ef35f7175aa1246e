import Testing
@testable import CBOR
