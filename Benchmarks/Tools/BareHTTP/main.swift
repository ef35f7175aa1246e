// A Hummingbird server with none of Sesame's middleware, sessions, database or logging: the floor under every
// request `sesame serve` answers. scripts/bench-server --mode http measures it beside Sesame in the same run, on the
// same cores, so the CPU a request costs in Sesame can be split into what the framework costs and what Sesame adds.
//
//     BareHTTP --port P [--origin http://localhost:8080] [--nio-port Q]
//
//   GET  /plain                  "ok" from a prepared buffer: Hummingbird and NIO alone (parse, route, write)
//   GET  /.well-known/webauthn   the document Sesame serves at the same path, encoded per request with the same
//                                JSONEncoder settings (sorted keys, slashes unescaped) and content type
//   POST /json                   {"credential": an assertion}: the body collected (at most 64 KiB) and decoded with
//                                Foundation's JSONDecoder into the WebAuthn library's AuthenticationResponseJSON, as
//                                Sesame decodes a sign-in; answers {"id": the credential's ID} (400 when it does not
//                                decode)
//   any GET on --nio-port        "ok" from SwiftNIO's HTTP/1 pipeline and one handler, without Hummingbird
//                                (PlainNIOServer.swift): the floor under Hummingbird's own
//
// Stops on SIGTERM or SIGINT (graceful shutdown through the application's service group).
import Foundation
import Hummingbird
import Logging
import NIOCore
import WebAuthn

struct FinishRequest: Decodable {
    let credential: AuthenticationResponseJSON
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

guard let port = option("--port").flatMap(Int.init), (1...65535).contains(port) else {
    FileHandle.standardError.write(Data("usage: BareHTTP --port P [--origin URL]\n".utf8))
    exit(2)
}
let origin = option("--origin") ?? "http://localhost:8080"
if let nioPort = option("--nio-port").flatMap(Int.init), (1...65535).contains(nioPort) {
    try await startPlainNIOServer(port: nioPort)
}

let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return encoder
}()
let json: HTTPFields = [.contentType: "application/json; charset=utf-8"]
let plain = ByteBuffer(string: "ok")

let router = Router()
router.get("/plain") { _, _ -> Response in
    Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: plain))
}
router.get("/.well-known/webauthn") { _, _ -> Response in
    let data = try encoder.encode(["origins": [origin]])
    return Response(status: .ok, headers: json, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
router.post("/json") { request, _ -> Response in
    let buffer = try await request.body.collect(upTo: 64 * 1024)
    guard let finish = try? JSONDecoder().decode(FinishRequest.self, from: Data(buffer.readableBytesView)) else {
        return Response(status: .badRequest)
    }
    let data = try encoder.encode(["id": finish.credential.id])
    return Response(status: .ok, headers: json, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "bare"),
    logger: {
        var logger = Logger(label: "bare")
        logger.logLevel = .error
        return logger
    }()
)
try await app.runService()
