import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// Reads the body into memory and makes that buffer the body (a streamed body can be read only once): to keep an
    /// answer (idempotency keys) or to look at it before sending it (entity tags).
    public mutating func collectBody() async throws -> ByteBuffer {
        let collected = CollectedBody()
        try await body.write(Collector(collected: collected))
        body = .init(byteBuffer: collected.buffer)
        return collected.buffer
    }
}

private final class CollectedBody: @unchecked Sendable {
    var buffer = ByteBuffer()
}

private struct Collector: ResponseBodyWriter {
    let collected: CollectedBody

    mutating func write(_ part: ByteBuffer) async throws {
        var part = part
        collected.buffer.writeBuffer(&part)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
