import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SurgeTestSupport

/// A stand-in for both push providers, inside the test process: Google's OAuth2 token endpoint (`POST /token`),
/// FCM HTTP v1 (`POST /v1/projects/<project>/messages:send`) and the APNs provider API (`POST /3/device/<token>`).
/// It records every request and answers 200 unless the test scripted otherwise for a device token. APNs is played
/// over plain HTTP/1.1 here (the real service is HTTP/2 over TLS; the adapter's requests are the same).
final class PushProviderDouble: Sendable {
    struct Recorded: Sendable {
        var path: String
        var headers: [String: String]
        var body: Data

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
        var form: [String: String] {
            var components = URLComponents()
            components.percentEncodedQuery = String(decoding: body, as: UTF8.self)
            return Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { first, _ in first }
        }
        /// The device an FCM send or an APNs push is for.
        var deviceToken: String? {
            if path.hasPrefix("/3/device/") { return String(path.dropFirst("/3/device/".count)) }
            return (json["message"] as? [String: Any])?["token"] as? String
        }
    }

    struct Answer: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String = ""
    }

    private let recorded = LockedValue<[Recorded]>([])
    /// Answers still to give, per device token, in order; the last one repeats.
    private let scripts = LockedValue<[String: [Answer]]>([:])
    private let issued = LockedValue<[String]>([])
    private let port = LockedValue<Int?>(nil)
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init() async throws {
        let recorded = self.recorded, scripts = self.scripts, issued = self.issued, port = self.port
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let entry = Recorded(path: request.uri.path, headers: headers, body: body)
            recorded.withLock { $0.append(entry) }
            if entry.path == "/token" {
                let token = "fcm-access-" + UUID().uuidString.lowercased()
                issued.withLock { $0.append(token) }
                return Self.response(Answer(status: 200, body: #"{"access_token":"\#(token)","expires_in":3600,"token_type":"Bearer"}"#))
            }
            let answer = entry.deviceToken.flatMap { device in
                scripts.withLock { scripts -> Answer? in
                    guard var queue = scripts[device], let first = queue.first else { return nil }
                    if queue.count > 1 { queue.removeFirst() }
                    scripts[device] = queue
                    return first
                }
            }
            let success = entry.path.hasPrefix("/3/device/") ? "" : #"{"name":"projects/surge-test/messages/\#(UUID().uuidString)"}"#
            return Self.response(answer ?? Answer(status: 200, body: success))
        }
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port } }, logger: Logger.test("push-provider"))
        group = ServiceGroup(services: [app], logger: Logger.test("push-provider"))
        let group = self.group
        task = Task { try await group.run() }
        try await waitUntil("the push provider double listens") { port.value != nil }
    }

    private static func response(_ answer: Answer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        for (name, value) in answer.headers { if let field = HTTPField.Name(name) { headers[field] = value } }
        return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
    }

    var url: String { "http://127.0.0.1:\(port.value ?? 0)" }
    var tokenURI: String { url + "/token" }

    var requests: [Recorded] { recorded.value }
    var tokenExchanges: [Recorded] { requests.filter { $0.path == "/token" } }
    var accessTokensIssued: [String] { issued.value }
    func sends(to device: String) -> [Recorded] { requests.filter { $0.path != "/token" && $0.deviceToken == device } }

    /// From now on the device's sends get these answers in turn, the last one for good.
    func script(_ device: String, _ answers: [Answer]) { scripts.withLock { $0[device] = answers } }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
