import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import NotificationsDomain

/// A way out to the user beyond the inbox: push (a `PushMessage` to a device token) or e-mail (a `RenderedMail` to an
/// address). A channel makes one attempt and says what it came to; retrying, giving up and forgetting devices are the
/// dispatcher's.
protocol DeliveryChannel<Message>: Sendable {
    associatedtype Message: Sendable
    func send(_ message: Message, to address: String) async -> DeliveryOutcome
}

/// What a provider answered, read in full (error bodies are small; a success body is not needed).
struct ProviderAnswer: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: Data
}

/// How the channels call their providers: over one `HTTPClient` per kind of provider, HTTP/2 wherever the endpoint
/// offers it over TLS (FCM and APNs do: a push is one request, and many are in flight on one connection), HTTP/1.1
/// otherwise with up to `connections` per host. Certificates in `extraTrustRoots` (a PEM file) are trusted beside the
/// system's: a private relay's, or a test double's.
struct ProviderHTTP: Sendable {
    static let timeout = TimeAmount.seconds(10)
    static let maxBody = 64 * 1024

    let client: HTTPClient

    init(connections: Int, extraTrustRoots: String? = nil) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let extraTrustRoots { tls.additionalTrustRoots = [.file(extraTrustRoots)] }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = .automatic
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func post(_ url: String, headers: HTTPHeaders, body: Data) async throws -> ProviderAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: Self.timeout)
        let bytes = try await response.body.collect(upTo: Self.maxBody)
        return ProviderAnswer(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }
}
