import GatewayDomain
import SurgeTestSupport
import Testing

/// `RequestHead`: the strict subset of HTTP/1.1 heads the gateway's proxy reads from the bytes, and that everything
/// outside it is left to NIO's decoder.
@Suite("Gateway: request heads read from the bytes", .tags(.unit), .kind(.unit))
struct RequestHeadTests {
    static func parse(_ text: String, limit: Int = 16_384) -> RequestHead.Parsed {
        Array(text.utf8).withUnsafeBytes { RequestHead.parse($0, limit: limit) }
    }

    @Test("a head: method, target, lower-case names, values without their blanks, its length and its body's")
    func parsesHead() throws {
        let text = "POST /v1/attempts/a1/check-ins?x=1 HTTP/1.1\r\nHost: surge\r\nAuthorization:  Bearer abc \r\n"
            + "Content-Length: 12\r\nX-Forwarded-For: 1.1.1.1\r\nx-forwarded-for:\t2.2.2.2\r\nEmpty:\r\n\r\n{\"done\":true}"
        guard case .head(let head) = Self.parse(text) else {
            Issue.record("not parsed")
            return
        }
        #expect(head.method == "POST")
        #expect(head.target == "/v1/attempts/a1/check-ins?x=1")
        #expect(head.fields.map(\.name) == ["host", "authorization", "content-length", "x-forwarded-for", "x-forwarded-for", "empty"])
        #expect(head["authorization"] == "Bearer abc")
        #expect(head["x-forwarded-for"] == "1.1.1.1, 2.2.2.2")
        #expect(head["empty"] == "")
        #expect(head["origin"] == nil)
        #expect(head.contentLength == 12)
        #expect(head.length == text.utf8.count - 13)
    }

    @Test("a head not yet whole, at every byte it could stop at, is incomplete; past the limit it is unsupported")
    func incomplete() {
        let text = "GET /v1/me HTTP/1.1\r\nHost: surge\r\n\r\n"
        for end in 0..<text.utf8.count {
            #expect(Self.parse(String(text.utf8.prefix(end))!) == .incomplete, "\(end) bytes")
        }
        #expect(Self.parse("GET /v1/me HTTP/1.1\r\nHost: surge\r\n", limit: 30) == .unsupported)
        guard case .head(let head) = Self.parse(text) else {
            Issue.record("not parsed")
            return
        }
        #expect(head.length == text.utf8.count)
        #expect(head.contentLength == 0)
    }

    @Test(
        "anything outside the subset is left to the decoder",
        arguments: [
            "GET /v1/me HTTP/1.0\r\n\r\n",  // another version
            "get /v1/me HTTP/1.1\r\n\r\n",  // a lower-case method
            "GET  /v1/me HTTP/1.1\r\n\r\n",  // two spaces
            "GET http://surge/v1/me HTTP/1.1\r\n\r\n",  // an absolute-form target
            "GET * HTTP/1.1\r\n\r\n",
            "GET /v1/m\te HTTP/1.1\r\n\r\n",
            "\r\nGET /v1/me HTTP/1.1\r\n\r\n",  // a leading empty line
            "GET /v1/me HTTP/1.1\nHost: surge\r\n\r\n",  // a bare LF
            "GET /v1/me HTTP/1.1\r\nHost: surge\n\r\n",
            "GET /v1/me HTTP/1.1\r\nHost: surge\rX: y\r\n\r\n",  // a bare CR
            "GET /v1/me HTTP/1.1\r\nHost : surge\r\n\r\n",  // a space before the colon
            "GET /v1/me HTTP/1.1\r\n: surge\r\n\r\n",  // no name
            "GET /v1/me HTTP/1.1\r\nHost surge\r\n\r\n",  // no colon
            "GET /v1/me HTTP/1.1\r\nHost: surge\r\n folded\r\n\r\n",  // obs-fold
            "GET /v1/me HTTP/1.1\r\nX: caf\u{E9}\r\n\r\n",  // non-ASCII
            "GET /v1/me HTTP/1.1\r\nX: a\u{01}b\r\n\r\n",  // a control byte
            "POST /v1/me HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /v1/me HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            "POST /v1/me HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n",
            "POST /v1/me HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
            "POST /v1/me HTTP/1.1\r\nContent-Length: \r\n\r\n",
            "POST /v1/me HTTP/1.1\r\nContent-Length: 12345678901\r\n\r\n",
        ])
    func unsupported(text: String) {
        #expect(Self.parse(text) == .unsupported)
    }

    @Test("random bytes never crash the parser, and what it reads as a head ends where a CRLF CRLF does")
    func randomBytes() {
        var generator = SeededRandom(seed: 46)
        let alphabet = Array("GET /v1:Host \r\n-0123456789abcXZ\t".utf8) + [0, 0x7F, 0xC3]
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...60, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            if case .head(let head) = bytes.withUnsafeBytes({ RequestHead.parse($0) }) {
                #expect(head.length >= 4 && bytes[head.length - 4..<head.length].elementsEqual("\r\n\r\n".utf8))
            }
        }
    }
}
