import Foundation
import Hummingbird
import NIOCore
import SurgeTestSupport
import Testing

@testable import SurgeRuntime

@Suite("Idempotency keys' fingerprints", .tags(.unit), .kind(.unit))
struct IdempotencyFingerprintTests {
    typealias Middleware = IdempotentRequestMiddleware<SurgeRequestContext>

    func fingerprint(_ body: String) -> Data {
        fingerprint("POST", "/v1/x", body)
    }

    func fingerprint(_ method: String, _ target: String, _ body: String) -> Data {
        Middleware.fingerprint(method: method, target: target, body: ByteBuffer(string: body))
    }

    @Test("the same method, target and body match; JSON matches by meaning, whatever its keys' order and spacing")
    func fingerprints() {
        #expect(fingerprint("a") == fingerprint("a"))
        #expect(fingerprint("a") != fingerprint("b"))
        #expect(fingerprint("POST", "/v1/y", "a") != fingerprint("a"))
        #expect(fingerprint("PUT", "/v1/x", "a") != fingerprint("a"))
        #expect(fingerprint("POST", "/v1/x?page=2", "") != fingerprint(""))
        #expect(fingerprint(#"{"a":1,"b":[2,3]}"#) == fingerprint(#"{ "b": [2, 3], "a": 1 }"#))
        #expect(fingerprint(#"{"a":1,"b":[2,3]}"#) != fingerprint(#"{"a":1,"b":[3,2]}"#))
        #expect(fingerprint(#"{"a":1}"#) != fingerprint(#"{"a":2}"#))
    }
}
