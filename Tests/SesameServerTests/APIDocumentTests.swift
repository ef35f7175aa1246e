import Foundation
import Testing

@testable import SesameCore
@testable import SesameServer

/// The API document's assembly from each target's part (`APIDocument.assembled`): the layout a fragment keeps, a
/// path or component two parts declare, references to components no part declares.
@Suite struct APIDocumentTests {
    static let base = APIFragment(
        owner: "Base",
        text: """
            openapi: 3.1.0
            info:
              title: Test
              description: |
                First paragraph.

                Second paragraph.
            servers:
              - url: http://localhost:8080
            components:
              schemas:
                Error:
                  type: object
              responses:
                Forbidden:
                  description: Refused.
                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/Error'

            """)

    static func part(_ owner: String, _ text: String) -> APIFragment { APIFragment(owner: owner, text: text) }

    static let first = part(
        "First",
        """
        paths:
          /one:
            get:
              responses:
                '200':
                  description: One.

                  content:
                    application/json:
                      schema:
                        $ref: '#/components/schemas/One'
        components:
          schemas:
            One:
              type: string
        """)

    static let second = part(
        "Second",
        """
        components:
          securitySchemes:
            device:
              type: http
              scheme: bearer
        paths:
          /two/{id}:
            delete:
              responses:
                '403':
                  $ref: '#/components/responses/Forbidden'
        """)

    @Test func partsAreAssembledSectionBySectionInOrder() throws {
        let document = try APIDocument.assembled(base: Self.base, parts: [Self.first, Self.second])
        #expect(
            document == """
                openapi: 3.1.0
                info:
                  title: Test
                  description: |
                    First paragraph.

                    Second paragraph.
                servers:
                  - url: http://localhost:8080
                components:
                  securitySchemes:
                    device:
                      type: http
                      scheme: bearer
                  schemas:
                    Error:
                      type: object
                    One:
                      type: string
                  responses:
                    Forbidden:
                      description: Refused.
                      content:
                        application/json:
                          schema:
                            $ref: '#/components/schemas/Error'
                paths:
                  /one:
                    get:
                      responses:
                        '200':
                          description: One.

                          content:
                            application/json:
                              schema:
                                $ref: '#/components/schemas/One'
                  /two/{id}:
                    delete:
                      responses:
                        '403':
                          $ref: '#/components/responses/Forbidden'

                """)
    }

    @Test func aPathOrComponentTwoPartsDeclareIsRefusedNamingBoth() throws {
        let again = Self.part("Again", "paths:\n  /one:\n    get:\n      responses: {}\n")
        #expect(throws: APIDocumentError.self) {
            try APIDocument.assembled(base: Self.base, parts: [Self.first, again])
        }
        do {
            _ = try APIDocument.assembled(base: Self.base, parts: [Self.first, again])
        } catch {
            #expect(error.code == .declaredTwice)
            #expect(error.message == "path /one is declared by both First and Again")
        }
        let schema = Self.part("Schema", "components:\n  schemas:\n    Error:\n      type: string\n")
        do {
            _ = try APIDocument.assembled(base: Self.base, parts: [schema])
            Issue.record("a schema declared twice was accepted")
        } catch {
            #expect(error.code == .declaredTwice)
            #expect(error.message == "#/components/schemas/Error is declared by both Base and Schema")
        }
        // The same name in two sections is two components.
        let response = Self.part("Response", "components:\n  responses:\n    Error:\n      description: x\n")
        #expect(throws: Never.self) { try APIDocument.assembled(base: Self.base, parts: [response]) }
    }

    @Test func aReferenceToAComponentNoPartDeclaresIsRefused() throws {
        let dangling = Self.part(
            "Dangling",
            "paths:\n  /x:\n    get:\n      responses:\n        '404':\n          $ref: '#/components/responses/Gone'\n"
        )
        do {
            _ = try APIDocument.assembled(base: Self.base, parts: [dangling])
            Issue.record("a dangling reference was accepted")
        } catch {
            #expect(error.code == .unknownReference)
            #expect(error.message == "Dangling refers to #/components/responses/Gone, which no part declares")
        }
    }

    /// Each text breaks the layout somewhere; the error names the part and the line.
    @Test(arguments: [
        ("paths:\n\t/x:\n", 2),  // a tab
        ("info:\n  title: Mine\n", 1),  // only the base has info
        ("tags: []\n", 1),  // no other top-level key
        ("paths:\n  /x:\n    get: {}\npaths:\n  /y:\n    get: {}\n", 4),  // a top-level key twice
        ("paths:\n  /x: {get: {}}\n", 2),  // an entry with its value on its line
        ("paths:\n  x:\n    get: {}\n", 2),  // a path that does not start with /
        ("paths:\n   /x:\n", 2),  // a path at 3 spaces
        ("paths:\n    get: {}\n", 2),  // a body before any path
        ("  /x:\n", 1),  // an indented line before any key
        ("components:\n  schemas:\n    One:\n      type: string\n   Two:\n", 5),  // 3 spaces under components
        ("components:\n  models:\n    One:\n", 2),  // not a section of components
        ("components:\n    One:\n      type: string\n", 2),  // a component outside a section
        ("components:\n  schemas:\n    'One':\n      type: string\n", 3),  // a quoted name
        ("paths", 1),  // no colon
        ("paths:\r\n  /x:\r\n", 1),  // carriage returns
    ])
    func aFragmentThatBreaksTheLayoutIsRefused(text: String, line: Int) throws {
        do {
            _ = try APIDocument.assembled(base: Self.base, parts: [Self.part("Broken", text)])
            Issue.record("accepted: \(text.debugDescription)")
        } catch {
            #expect(error.code == .layout, "\(text.debugDescription)")
            #expect(error.message.hasPrefix("Broken's openapi.yaml, line \(line): "), "\(error.message)")
        }
    }

    @Test func aMissingFragmentOrABaseWithoutItsHeaderIsRefused() throws {
        #expect(throws: APIDocumentError.self) {
            try APIDocument.assembled(base: Self.base, parts: [APIFragment(owner: "Gone", text: nil)])
        }
        let headless = APIFragment(owner: "Base", text: "paths:\n  /x:\n    get: {}\n")
        #expect(throws: APIDocumentError.self) { try APIDocument.assembled(base: headless, parts: []) }
    }

    /// The served document assembles from the parts in the bundles: each part is there, and each is more than a
    /// stub (every feature part describes at least one path).
    @Test func theServersPartsAssemble() throws {
        let document = try APIDocument.assembled(base: .core, parts: APIFragment.parts)
        #expect(document == APIDocument.server)
        #expect(document.hasPrefix("openapi: 3.1.0\n"))
        for part in APIFragment.parts {
            #expect(try #require(part.text).contains("\npaths:\n  /") || part.text?.hasPrefix("paths:\n  /") == true)
        }
        #expect(Set(APIFragment.parts.map(\.owner)).count == APIFragment.parts.count)
    }
}
