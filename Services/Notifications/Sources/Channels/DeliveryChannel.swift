import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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

enum ProviderHTTP {
    static let timeout = TimeAmount.seconds(10)
    static let maxBody = 64 * 1024

    static func post(_ url: String, headers: HTTPHeaders, body: Data) async throws -> ProviderAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: maxBody)
        return ProviderAnswer(status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }
}
