import GatewayDomain
import SurgeTestSupport
import Testing

/// `ResponseHead` and `ChunkedBody`: the services' answers as the gateway's upstream client reads them from the bytes.
@Suite("Gateway: answer heads and chunked bodies read from the bytes", .tags(.unit), .kind(.unit))
struct ResponseHeadTests {
    static func parse(_ text: String, limit: Int = 65_536) -> ResponseHead.Parsed {
        Array(text.utf8).withUnsafeBytes { ResponseHead.parse($0, limit: limit) }
    }

    static func head(_ text: String) throws -> ResponseHead {
        guard case .head(let head) = parse(text) else { throw Unparsed(text: text) }
        return head
    }

    struct Unparsed: Error { let text: String }

    @Test("a head: status, reason, lower-case names, values without their blanks, its length, framing and keep-alive")
    func parsesHead() throws {
        let text = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 7\r\nX-Note:  caf\u{E9} \r\nVary: a\r\nvary: b\r\n\r\n{\"a\":1}"
        let head = try Self.head(text)
        #expect(head.status == 201)
        #expect(head.reason == "Created")
        #expect(head.fields.map(\.name) == ["content-type", "content-length", "x-note", "vary", "vary"])
        #expect(head["x-note"] == "caf\u{E9}")
        #expect(head["vary"] == "a, b")
        #expect(head.length == text.utf8.count - 7)
        #expect(head.framing == .length(7))
        #expect(head.keepsAlive)
    }

    @Test("framing and keep-alive: chunked, a length, neither (until close); Connection close and HTTP/1.0")
    func framing() throws {
        #expect(try Self.head("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n").framing == .chunked)
        #expect(try Self.head("HTTP/1.1 200 OK\r\n\r\n").framing == .untilClose)
        #expect(try Self.head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n").keepsAlive == false)
        #expect(try Self.head("HTTP/1.1 200 OK\r\nConnection: keep-alive, Upgrade\r\nContent-Length: 3\r\n\r\n").keepsAlive)
        #expect(try Self.head("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\n").keepsAlive == false)
        #expect(try Self.head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\n").keepsAlive)
        let reasonless = try Self.head("HTTP/1.1 204\r\n\r\n")
        #expect(reasonless.status == 204 && reasonless.reason == "")
        #expect(reasonless.hasBody(forMethod: "GET") == false)
        let ok = try Self.head("HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n")
        #expect(ok.hasBody(forMethod: "GET") && !ok.hasBody(forMethod: "HEAD"))
        #expect(try Self.head("HTTP/1.1 304 Not Modified\r\nContent-Length: 42\r\n\r\n").hasBody(forMethod: "GET") == false)
        #expect(try Self.head("HTTP/1.1 100 Continue\r\n\r\n").hasBody(forMethod: "POST") == false)
    }

    @Test("a head not yet whole, at every byte it could stop at, is incomplete; past the limit it is unsupported")
    func incomplete() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
        for end in 0..<text.utf8.count {
            #expect(Self.parse(String(text.utf8.prefix(end))!) == .incomplete, "\(end) bytes")
        }
        #expect(Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", limit: 30) == .unsupported)
    }

    @Test(
        "what the client cannot trust is unsupported",
        arguments: [
            "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "http/1.1 200 OK\r\n\r\n",
            "HTTP/1.1 200 OK\nContent-Length: 1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\n Folded: yes\r\n\r\n", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "HTTP/1.1 200 OK\r\n: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\nX: a\u{7}b\r\n\r\n", "HTTP/1.1 200 O\u{0}K\r\n\r\n",
        ])
    func unsupported(_ text: String) {
        #expect(Self.parse(text) == .unsupported)
    }

    static let chunked = "5\r\nhello\r\n1;name=value\r\n \r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n"

    /// Reads `bytes` arriving in the pieces `cuts` makes, as the client does: what a read leaves is read again with
    /// what comes next.
    static func readChunked(_ bytes: [UInt8], cuts: [Int]) throws -> (body: [UInt8], finished: Bool, rest: Int) {
        var reader = ChunkedBody()
        var pending: [UInt8] = []
        var body: [UInt8] = []
        var start = 0
        for end in cuts + [bytes.count] where end >= start {
            pending += bytes[start..<end]
            start = end
            let read = try pending.withUnsafeBytes { try reader.read($0) }
            for range in read.data { body += pending[range] }
            pending.removeFirst(read.consumed)
            if read.finished { return (body, true, pending.count + bytes.count - start) }
        }
        return (body, false, pending.count)
    }

    @Test("a chunked body cut anywhere, once or twice, reads as the same data; what follows it is left")
    func chunkedAnywhere() throws {
        let bytes = Array((Self.chunked + "NEXT").utf8)
        let expected = Array("hello 0123456789abcdef".utf8)
        let whole = try Self.readChunked(bytes, cuts: [])
        #expect(whole.body == expected && whole.finished && whole.rest == 4)
        for cut in 0...bytes.count {
            let read = try Self.readChunked(bytes, cuts: [cut])
            #expect(read.body == expected && read.finished && read.rest == 4, "cut at \(cut)")
        }
        var random = SeededRandom(seed: 46)
        for _ in 0..<2_000 {
            let cuts = [Int.random(in: 0...bytes.count, using: &random), Int.random(in: 0...bytes.count, using: &random)].sorted()
            let read = try Self.readChunked(bytes, cuts: cuts)
            #expect(read.body == expected && read.finished && read.rest == 4, "cuts at \(cuts)")
        }
        let unfinished = try Self.readChunked(Array("5\r\nhello\r\n".utf8), cuts: [])
        #expect(unfinished.body == Array("hello".utf8) && !unfinished.finished)
    }

    @Test("malformed chunks are refused", arguments: ["x\r\n", "5\r\nhelloX\r\n", "5\nhello\r\n", "\r\n", "12345678901234567\r\n"])
    func malformedChunks(_ text: String) {
        #expect(throws: ChunkedBody.Malformed.self) { try Self.readChunked(Array(text.utf8), cuts: []) }
    }
}
