/// A language's plural rule, as its PO header states it:
/// `Plural-Forms: nplurals=6; plural=(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5);`
///
/// The expression is the C subset the GNU gettext manual describes ("Additional functions for plural forms"): `n`,
/// non-negative integers, parentheses, `!`, `* / %`, `+ -`, `< <= > >=`, `== !=`, `&&`, `||` and `?:`. It is parsed
/// once into a tree (``Expression``); the page scripts receive the same tree as JSON (``json``) and walk it, so the
/// rule is parsed in one place only.
public struct PluralRule: Sendable, Equatable {
    public indirect enum Expression: Sendable, Equatable {
        case n
        case number(Int)
        case not(Expression)
        case binary(String, Expression, Expression)
        case conditional(Expression, Expression, Expression)
    }

    public let count: Int
    public let expression: Expression
    /// The header value as given.
    public let source: String

    /// The rule of languages with one form (`nplurals=1; plural=0;`).
    public static let single = try! PluralRule(parsing: "nplurals=1; plural=0;")

    public init(parsing header: String) throws(LanguageError) {
        func fail(_ why: String) -> LanguageError {
            LanguageError(.malformedPluralRule, reason: "Plural-Forms \(why)")
        }
        var count: Int?
        var expression: Expression?
        for part in header.split(separator: ";") {
            let item = part.filter { $0 != " " && $0 != "\t" }
            if item.isEmpty { continue }
            if item.hasPrefix("nplurals=") {
                guard let value = Int(item.dropFirst(9)), (1...6).contains(value) else {
                    throw fail("needs nplurals from 1 to 6")
                }
                count = value
            } else if item.hasPrefix("plural=") {
                var parser = Parser(text: Array(item.dropFirst(7).utf8))
                expression = try parser.parseAll()
            } else {
                throw fail("has an unknown part")
            }
        }
        guard let count, let expression else { throw fail("needs nplurals and plural") }
        self.count = count
        self.expression = expression
        self.source = header
    }

    /// The index of the form for `n` (0 ..< count); a rule that answers out of range gives the last form.
    public func index(for n: Int) -> Int {
        let value = Self.evaluate(expression, n)
        return value >= 0 && value < count ? value : count - 1
    }

    private static func evaluate(_ expression: Expression, _ n: Int) -> Int {
        switch expression {
        case .n: return n
        case .number(let value): return value
        case .not(let inner): return evaluate(inner, n) == 0 ? 1 : 0
        case .conditional(let condition, let then, let otherwise):
            return evaluate(condition, n) != 0 ? evaluate(then, n) : evaluate(otherwise, n)
        case .binary(let op, let left, let right):
            let l = evaluate(left, n)
            if op == "&&" { return l != 0 && evaluate(right, n) != 0 ? 1 : 0 }
            if op == "||" { return l != 0 || evaluate(right, n) != 0 ? 1 : 0 }
            let r = evaluate(right, n)
            switch op {
            case "%": return r == 0 ? 0 : l % r
            case "/": return r == 0 ? 0 : l / r
            case "*": return l &* r
            case "+": return l &+ r
            case "-": return l &- r
            case "<": return l < r ? 1 : 0
            case "<=": return l <= r ? 1 : 0
            case ">": return l > r ? 1 : 0
            case ">=": return l >= r ? 1 : 0
            case "==": return l == r ? 1 : 0
            default: return l != r ? 1 : 0
            }
        }
    }

    /// The tree as JSON for the page scripts: `"n"`, a number, `["!", x]`, `[op, left, right]`, `["?", c, a, b]`.
    public var json: String { Self.json(expression) }

    private static func json(_ expression: Expression) -> String {
        switch expression {
        case .n: return "\"n\""
        case .number(let value): return String(value)
        case .not(let inner): return "[\"!\",\(json(inner))]"
        case .binary(let op, let l, let r): return "[\"\(op)\",\(json(l)),\(json(r))]"
        case .conditional(let c, let a, let b): return "[\"?\",\(json(c)),\(json(a)),\(json(b))]"
        }
    }

    /// Recursive descent over the expression's bytes (spaces already removed), nesting at most 32 deep.
    private struct Parser {
        let text: [UInt8]
        var position = 0
        var depth = 0

        mutating func parseAll() throws(LanguageError) -> Expression {
            let expression = try conditional()
            guard position == text.count else { throw fail("has text after the expression") }
            return expression
        }

        func fail(_ why: String) -> LanguageError { LanguageError(.malformedPluralRule, reason: "plural= \(why)") }

        func peek(_ token: String) -> Bool {
            let bytes = Array(token.utf8)
            return text.count - position >= bytes.count && Array(text[position..<position + bytes.count]) == bytes
        }

        mutating func take(_ token: String) -> Bool {
            guard peek(token) else { return false }
            position += token.utf8.count
            return true
        }

        mutating func conditional() throws(LanguageError) -> Expression {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 32 else { throw fail("nests too deeply") }
            let condition = try binary(level: 0)
            guard take("?") else { return condition }
            let then = try conditional()
            guard take(":") else { throw fail("has ? without :") }
            return .conditional(condition, then, try conditional())
        }

        static let levels: [[String]] = [
            ["||"], ["&&"], ["==", "!="], ["<=", ">=", "<", ">"], ["+", "-"], ["*", "/", "%"],
        ]

        mutating func binary(level: Int) throws(LanguageError) -> Expression {
            guard level < Self.levels.count else { return try unary() }
            var left = try binary(level: level + 1)
            while let op = Self.levels[level].first(where: { peek($0) }) {
                // `!=` is not `!` and `<=` is not `<`: the longer tokens are listed first.
                position += op.utf8.count
                left = .binary(op, left, try binary(level: level + 1))
            }
            return left
        }

        mutating func unary() throws(LanguageError) -> Expression {
            if peek("!") && !peek("!=") {
                position += 1
                depth += 1
                defer { depth -= 1 }
                guard depth <= 32 else { throw fail("nests too deeply") }
                return .not(try unary())
            }
            if take("(") {
                let inner = try conditional()
                guard take(")") else { throw fail("has an unclosed (") }
                return inner
            }
            if take("n") { return .n }
            var value = 0
            var digits = 0
            while position < text.count, text[position] >= 48, text[position] <= 57, digits < 9 {
                value = value * 10 + Int(text[position] - 48)
                position += 1
                digits += 1
            }
            guard digits > 0 else { throw fail("expects n, a number or (") }
            return .number(value)
        }
    }
}
