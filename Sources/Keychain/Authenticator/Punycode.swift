/// Punycode (RFC 3492) encoding, to turn the public suffix list's Unicode rules into the ASCII (`xn--`) form
/// origins use. Only encoding is needed: hosts arrive in ASCII.
enum Punycode {
    private static let base: UInt32 = 36
    private static let tMin: UInt32 = 1
    private static let tMax: UInt32 = 26
    private static let skew: UInt32 = 38
    private static let damp: UInt32 = 700
    private static let initialBias: UInt32 = 72
    private static let initialN: UInt32 = 128

    /// The ASCII label for `label`: unchanged when it is ASCII, else `xn--` and its Punycode. Nil on overflow
    /// (labels far longer than DNS allows).
    static func asciiLabel(_ label: String) -> String? {
        let scalars = label.unicodeScalars.map(\.value)
        if scalars.allSatisfy({ $0 < 0x80 }) { return label }
        return encode(scalars).map { "xn--" + $0 }
    }

    /// RFC 3492 §6.3.
    static func encode(_ input: [UInt32]) -> String? {
        guard input.count <= 1024 else { return nil }
        var output: [UInt8] = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = UInt32(output.count)
        var handled = basicCount
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }
        var n = initialN
        var delta: UInt32 = 0
        var bias = initialBias
        while handled < UInt32(input.count) {
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (step, o1) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !o1 else { return nil }
            let (d, o2) = delta.addingReportingOverflow(step)
            guard !o2 else { return nil }
            delta = d
            n = m
            for c in input {
                if c < n {
                    let (d2, o3) = delta.addingReportingOverflow(1)
                    guard !o3 else { return nil }
                    delta = d2
                }
                if c == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func digit(_ d: UInt32) -> UInt8 {
        d < 26 ? UInt8(d) + UInt8(ascii: "a") : UInt8(d - 26) + UInt8(ascii: "0")
    }

    private static func adapt(_ delta: UInt32, _ count: UInt32, _ first: Bool) -> UInt32 {
        var delta = first ? delta / damp : delta / 2
        delta += delta / count
        var k: UInt32 = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
