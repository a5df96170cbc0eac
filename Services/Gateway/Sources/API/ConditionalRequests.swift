import Crypto
import GatewayDomain
import HTTPTypes
import Hummingbird
import NIOCore
import SurgeContracts
import SurgeRuntime

/// Strong entity tags on the JSON the gateway answers reads with, and the conditional requests they allow (RFC 9110
/// §13): a GET whose `If-None-Match` names the current tag is answered 304 without a body; a PATCH whose `If-Match`
/// names none of them is answered 412 `precondition-failed` and not forwarded.
///
/// A tag is the SHA-256 of the representation's bytes (16 bytes of it, base64url): equal bytes have equal tags on
/// every replica and after restarts, and no service keeps a version for it. The gateway reads the current
/// representation for an `If-Match` (a GET of the same path, as the caller) just before forwarding the change: two
/// changes that send the current tag within that moment both pass, but a device that edits a stale copy does not.
/// As RFC 9110 §13.2.1 says, the precondition is not evaluated when that read finds nothing (404): the change then
/// answers for itself.
enum ConditionalRequests {
    static func respond(_ request: Request, context: GatewayRequestContext, handler: RoutePipeline.Handler) async throws -> Response {
        switch request.method {
        case .get:
            var response = try await handler(request, context)
            guard let tag = try await tag(&response) else { return response }
            guard tagRead(&response.headers, tag: tag, request: request.headers) else { return response }
            return Response(status: .notModified, headers: response.headers, body: .init())
        case .patch:
            let condition = request.headers[values: .ifMatch].joined(separator: ",")
            guard !condition.isEmpty else {
                return try await handler(request, context)
            }
            var current = try await handler(read(of: request), context)
            if current.status.code >= 500 { return current }
            if let tag = try await tag(&current), !EntityTags.matches(condition, current: tag) {
                throw Problem(
                    slug: "precondition-failed", title: "Precondition failed", status: .preconditionFailed,
                    detail: "The resource changed since the copy `If-Match` names was read: GET it again and apply the change to that.")
            }
            return try await handler(request, context)
        default:
            return try await handler(request, context)
        }
    }

    /// The tag of a 200 answer in JSON (its body read into memory), nil for anything else.
    static func tag(_ response: inout Response) async throws -> String? {
        guard isTagged(response.status, response.headers) else { return nil }
        return tag(of: try await response.collectBody())
    }

    /// Whether an answer gets a tag: a 200 in JSON.
    static func isTagged(_ status: HTTPResponse.Status, _ headers: HTTPFields) -> Bool {
        isTagged(status, contentType: headers[.contentType])
    }

    static func isTagged(_ status: HTTPResponse.Status, contentType: String?) -> Bool {
        status == .ok && contentType?.hasPrefix("application/json") == true
    }

    static func tag(of body: ByteBuffer) -> String {
        // Hashed in place: through `ByteBufferView` the generic path cost an answer more than the digest.
        let digest = body.withUnsafeReadableBytes { SHA256.hash(data: $0) }
        return "\"" + digest.withUnsafeBytes { Base64URL.encode(UnsafeRawBufferPointer(rebasing: $0.prefix(16))) } + "\""
    }

    /// Puts `tag` on a read's answer; true when the read's `If-None-Match` names it, and the answer must be a 304:
    /// `headers` then keep the tag and what guides caches, without the representation's type and length (RFC 9110
    /// §15.4.5), and the body is left out.
    static func tagRead(_ headers: inout HTTPFields, tag: String, request: HTTPFields) -> Bool {
        headers[.eTag] = tag
        let condition = request[values: .ifNoneMatch].joined(separator: ",")
        guard !condition.isEmpty, EntityTags.noneMatchFails(condition, current: tag) else { return false }
        headers[.contentType] = nil
        headers[.contentLength] = nil
        return true
    }

    /// The GET of the change's path, as the same caller.
    private static func read(of request: Request) -> Request {
        var head = request.head
        head.method = .get
        for name in [HTTPField.Name.contentType, .contentLength, .ifMatch, .idempotencyKey, .transferEncoding] { head.headerFields[name] = nil }
        return Request(head: head, body: .init(buffer: ByteBuffer()))
    }
}
