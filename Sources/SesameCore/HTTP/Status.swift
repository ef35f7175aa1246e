import Hummingbird

/// The answer of an endpoint that only reports what it did (`{"status": "removed"}`, with a count where one helps).
package struct Status: ResponseEncodable, Sendable {
    package let status: String
    package var count: Int? = nil
    package var remaining: Int? = nil

    package init(status: String, count: Int? = nil, remaining: Int? = nil) {
        self.status = status
        self.count = count
        self.remaining = remaining
    }
}
