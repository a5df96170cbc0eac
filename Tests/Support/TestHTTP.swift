import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import SurgeRuntime

/// A response as a test sees it.
public struct TestResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data

    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date(text, strategy: .iso8601)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad date \(text)"))
            }
            return date
        }
        return try decoder.decode(type, from: body)
    }

    /// The body as a JSON object, for asserting on fields without a type.
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? { headers.first(name: name) }
}

/// JSON over HTTP against a running service or gateway.
public struct TestHTTP: Sendable {
    public let baseURL: String
    public var defaultHeaders: [(String, String)] = []
    /// Set to call a service directly as the gateway would, on behalf of `caller`.
    var gatewaySigner: (signer: InternalCallSigner, caller: String?)?

    public init(baseURL: String) {
        self.baseURL = baseURL
    }

    /// The same client, sending `Authorization: Bearer <token>`.
    public func authorized(_ token: String) -> TestHTTP {
        var copy = self
        copy.defaultHeaders.append(("Authorization", "Bearer \(token)"))
        return copy
    }

    /// The same client, calling a service as the gateway does: signed with the stack's internal secret, on behalf of
    /// `caller` (nil: no caller).
    public func signedAsGateway(_ signer: InternalCallSigner, caller: String?) -> TestHTTP {
        var copy = self
        copy.gatewaySigner = (signer, caller)
        return copy
    }

    public func get(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.GET, path, body: nil, headers: headers)
    }

    public func delete(_ path: String, headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.DELETE, path, body: nil, headers: headers)
    }

    public func post(_ path: String, json: [String: any Sendable]? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.POST, path, body: try json.map { try JSONSerialization.data(withJSONObject: $0) }, headers: headers)
    }

    public func put(_ path: String, json: [String: any Sendable], headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.PUT, path, body: try JSONSerialization.data(withJSONObject: json), headers: headers)
    }

    public func patch(_ path: String, json: [String: any Sendable], headers: [(String, String)] = []) async throws -> TestResponse {
        try await send(.PATCH, path, body: try JSONSerialization.data(withJSONObject: json), headers: headers)
    }

    /// Sends the body in chunks without a Content-Length, as a streaming client would.
    public func sendChunked(_ method: HTTPMethod, _ path: String, body: Data, contentType: String = "application/json") async throws -> TestResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        for (name, value) in defaultHeaders { request.headers.add(name: name, value: value) }
        request.headers.add(name: "content-type", value: contentType)
        let chunks = stride(from: 0, to: body.count, by: 4096).map { ByteBuffer(data: body[$0..<min($0 + 4096, body.count)]) }
        request.body = .stream(chunks.async, length: .unknown)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return TestResponse(status: Int(response.status.code), headers: response.headers, body: Data(buffer: bytes))
    }

    public func send(
        _ method: HTTPMethod, _ path: String, body: Data?, contentType: String = "application/json",
        headers: [(String, String)] = []
    ) async throws -> TestResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        for (name, value) in defaultHeaders + headers { request.headers.add(name: name, value: value) }
        if let (signer, caller) = gatewaySigner {
            let requestID = UUID().uuidString.lowercased()
            if let caller { request.headers.replaceOrAdd(name: InternalHeaders.caller.rawName, value: caller) }
            request.headers.replaceOrAdd(name: InternalHeaders.requestID.rawName, value: requestID)
            request.headers.replaceOrAdd(
                name: InternalCallSigner.header.rawName,
                value: signer.signature(
                    method: method.rawValue, target: path, caller: caller, requestID: requestID,
                    idempotencyKey: request.headers.first(name: InternalHeaders.idempotencyKey.rawName),
                    body: body.map { .init(of: $0) } ?? .empty))
        }
        if let body {
            if !request.headers.contains(name: "content-type") { request.headers.add(name: "content-type", value: contentType) }
            request.body = .bytes(ByteBuffer(data: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return TestResponse(status: Int(response.status.code), headers: response.headers, body: Data(buffer: bytes))
    }
}

extension Array where Element: Sendable {
    /// The elements as an async sequence.
    var async: AsyncStream<Element> {
        AsyncStream { continuation in
            for element in self { continuation.yield(element) }
            continuation.finish()
        }
    }
}
