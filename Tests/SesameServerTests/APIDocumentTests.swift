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

    /// A list the vocabulary holds is named, not written: the assembly fills it, and refuses a name it was not given.
    @Test func vocabularyListsAreFilledAndAnUnknownOneIsRefused() throws {
        let listed = Self.part(
            "Listed",
            """
            components:
              schemas:
                Factor:
                  type: string
                  enum: []  # from the vocabulary: factors
            """)
        let document = try APIDocument.assembled(
            base: Self.base, parts: [listed], lists: ["factors": ["totp", "sms"]])
        #expect(document.contains("\n      type: string\n      enum: [totp, sms]\n"), "\(document)")
        #expect(!document.contains("from the vocabulary"))
        do {
            _ = try APIDocument.assembled(base: Self.base, parts: [listed], lists: ["errorCodes": []])
            Issue.record("an enum filled from a list that was not given")
        } catch {
            #expect(error.code == .unknownList, "\(error)")
        }
    }

    /// No part writes out by hand a list the vocabulary holds (a feature's new word would then need that part changed
    /// too, or the document would fall behind): every such enum is the marker, and the served document has each list
    /// in full.
    @Test func noPartWritesOutAVocabularyList() throws {
        let lists = APIDocument.vocabularyLists(.server)
        for part in [APIFragment.core] + APIFragment.parts {
            let text = try #require(part.text)
            for (name, values) in lists where values.count > 1 {
                // Any two of the list's words side by side in an enum is a hand-written copy.
                let pair = "enum: [\(values[0]), \(values[1])"
                #expect(!text.contains(pair), "\(part.owner) writes out the vocabulary's \(name)")
            }
        }
        let served = APIDocument.server
        for (name, values) in lists {
            #expect(served.contains("enum: [" + values.joined(separator: ", ") + "]"), "\(name) is not in the document")
        }
        #expect(!served.contains("from the vocabulary"))
    }

    @Test func aMissingFragmentOrABaseWithoutItsHeaderIsRefused() throws {
        #expect(throws: APIDocumentError.self) {
            try APIDocument.assembled(base: Self.base, parts: [APIFragment(owner: "Gone", text: nil)])
        }
        let headless = APIFragment(owner: "Base", text: "paths:\n  /x:\n    get: {}\n")
        #expect(throws: APIDocumentError.self) { try APIDocument.assembled(base: headless, parts: []) }
    }

    /// The walls hold for references too: a part's `$ref`s point into its own part, the core's base or the part of a
    /// target its target imports (Package.swift's dependencies, followed through), as its code may.
    @Test func eachPartRefersOnlyToWhatItsTargetImports() throws {
        let manifest = try VocabularyTests.text("Package.swift")
        let target = try Regex(#"\.target\(\s*name: "(Sesame\w*)",\s*dependencies: \[([^\]]*)\]"#)
        let dependency = try Regex(#""(Sesame\w*)""#)
        var imports: [String: Set<String>] = [:]
        for match in manifest.matches(of: target) {
            guard let name = match.output[1].substring, let list = match.output[2].substring else { continue }
            imports[String(name)] = Set(
                list.matches(of: dependency).compactMap { $0.output[1].substring.map(String.init) })
        }
        func below(_ target: String) -> Set<String> {
            var seen: Set<String> = []
            var next = [target]
            while let one = next.popLast() {
                for imported in imports[one] ?? [] where seen.insert(imported).inserted { next.append(imported) }
            }
            return seen
        }
        let parts = [APIFragment.core] + APIFragment.parts
        #expect(parts.allSatisfy { imports[$0.owner] != nil }, "a part whose owner Package.swift does not declare")
        var owners: [String: String] = [:]
        for part in parts {
            for (section, entries) in try APIDocument.read(part, isBase: part.owner == APIFragment.core.owner)
                .components
            {
                for entry in entries { owners["#/components/\(section)/\(entry.key)"] = part.owner }
            }
        }
        var references = 0
        for part in parts {
            let visible = below(part.owner).union([part.owner, APIFragment.core.owner])
            for line in try #require(part.text).components(separatedBy: "\n") {
                guard let reference = APIDocument.reference(in: line) else { continue }
                references += 1
                let owner = try #require(owners[reference])
                #expect(
                    visible.contains(owner),
                    "\(part.owner) refers to \(reference), which is \(owner)'s and \(part.owner) does not import")
            }
        }
        #expect(references > 500)
    }

    /// The served document assembles from the parts in the bundles: each part is there, and each is more than a
    /// stub (every feature part describes at least one path).
    @Test func theServersPartsAssemble() throws {
        let document = try APIDocument.assembled(
            base: .core, parts: APIFragment.parts, lists: APIDocument.vocabularyLists(.server))
        #expect(document == APIDocument.server)
        #expect(document.hasPrefix("openapi: 3.1.0\n"))
        for part in APIFragment.parts {
            #expect(try #require(part.text).contains("\npaths:\n  /") || part.text?.hasPrefix("paths:\n  /") == true)
        }
        #expect(Set(APIFragment.parts.map(\.owner)).count == APIFragment.parts.count)
    }
}
