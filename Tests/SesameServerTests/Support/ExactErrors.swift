import SesameCore
import Testing

/// Checks that `body` throws exactly `expected`: its code, its message and its details (`extra`). A server error's
/// own equality looks at the code only, as the libraries' errors do; tests that name a path, a line or a sealing
/// purpose hold all of them.
func expectExactly<C, R>(
    _ expected: ServerError<C>, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    let thrown = #expect(throws: ServerError<C>.self, sourceLocation: sourceLocation) { try body() }
    #expect(thrown?.code == expected.code, sourceLocation: sourceLocation)
    #expect(thrown?.message == expected.message, sourceLocation: sourceLocation)
    #expect(thrown?.extra == expected.extra, sourceLocation: sourceLocation)
}

/// `expectExactly` for an async body.
func expectExactly<C, R>(
    _ expected: ServerError<C>, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async {
    let thrown = await #expect(throws: ServerError<C>.self, sourceLocation: sourceLocation) { try await body() }
    #expect(thrown?.code == expected.code, sourceLocation: sourceLocation)
    #expect(thrown?.message == expected.message, sourceLocation: sourceLocation)
    #expect(thrown?.extra == expected.extra, sourceLocation: sourceLocation)
}
