import Testing
@testable import OneTimeCode
