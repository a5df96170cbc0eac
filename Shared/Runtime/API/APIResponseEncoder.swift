import Hummingbird
import SurgeContracts

/// Every service's response bodies: written by `SurgeJSONWriter` (what `SurgeJSON.apiEncoder()` writes, faster), with
/// the headers Hummingbird gives a JSON response.
public struct APIResponseEncoder: ResponseEncoder {
    public init() {}

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let writer = SurgeJSONWriter(instants: .wholeSeconds)
        let body = try (value as? any JSONWritable).map { try writer.write($0) } ?? writer.encode(value)
        var headers = HTTPFields()
        headers.reserveCapacity(4)
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.contentLength] = String(body.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
