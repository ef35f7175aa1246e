import Hummingbird

/// The answer of an endpoint that only reports what it did (`{"status": "removed"}`, with a count where one helps).
struct Status: ResponseEncodable, Sendable {
    let status: String
    var count: Int? = nil
    var remaining: Int? = nil
}
