import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SurgeTestSupport

/// A stand-in for an HTTP e-mail provider (Resend's API shape), inside the test process: it records every mail posted
/// to `POST /emails` and answers 200 with an id, or what the test scripted for an address. `report` signs a webhook
/// event about a mail as the provider would (Standard Webhooks, `webhookSecret`).
final class MailProviderDouble: Sendable {
    struct Sent: Sendable {
        var headers: [String: String]
        var to: [String]
        var from: String
        var subject: String
        var text: String
        var html: String
        /// The id the double answered the send with, which the provider's reports about the mail name.
        var providerID: String

        /// The token in the mail's link (after `token=`), if it has one.
        var token: String? {
            guard let range = text.range(of: "token=") else { return nil }
            return String(text[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        }
    }

    struct Answer: Sendable {
        var status: Int
        var body: String
    }

    private let sent = LockedValue<[Sent]>([])
    private let scripts = LockedValue<[String: Answer]>([:])
    private let port = LockedValue<Int?>(nil)
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    init() async throws {
        let sent = self.sent, scripts = self.scripts, port = self.port
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            let body = Data(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let json = (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
            let mail = Sent(
                headers: headers, to: json["to"] as? [String] ?? [], from: json["from"] as? String ?? "", subject: json["subject"] as? String ?? "",
                text: json["text"] as? String ?? "", html: json["html"] as? String ?? "", providerID: UUID().uuidString.lowercased())
            let answer = mail.to.first.flatMap { address in scripts.withLock { $0[address] } }
                ?? Answer(status: 200, body: #"{"id":"\#(mail.providerID)"}"#)
            if (200..<300).contains(answer.status) { sent.withLock { $0.append(mail) } }
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            return Response(status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
        }
        let app = Application(
            responder: responder, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLock { $0 = channel.localAddress?.port } }, logger: Logger.test("mail-provider"))
        group = ServiceGroup(services: [app], logger: Logger.test("mail-provider"))
        let group = self.group
        task = Task { try await group.run() }
        try await waitUntil("the mail provider double listens") { port.value != nil }
    }

    var url: String { "http://127.0.0.1:\(port.value ?? 0)/emails" }
    static let token = "re_test_token"

    /// Mails accepted so far.
    var mails: [Sent] { sent.value }
    func mails(to address: String) -> [Sent] { mails.filter { $0.to.contains(address) } }

    /// From now on mails to the address get this answer.
    func script(_ address: String, _ answer: Answer) { scripts.withLock { $0[address] = answer } }

    static let webhookSecret = "whsec_" + Data((0..<24).map { UInt8($0 * 7 % 256) }).base64EncodedString()

    /// A webhook event of `type` about `mail` (`bounce` for `email.bounced`), as the body and headers the provider sends.
    static func report(
        _ type: String, about mail: Sent, bounce: [String: String]? = nil, id: String = "msg_" + UUID().uuidString, secret: String = webhookSecret
    ) -> (body: Data, headers: [(String, String)]) {
        var data: [String: Any] = ["email_id": mail.providerID, "to": mail.to, "from": mail.from, "subject": mail.subject]
        if let bounce { data["bounce"] = bounce }
        let body = try! JSONSerialization.data(withJSONObject: ["type": type, "created_at": "2026-11-25T04:00:00.000Z", "data": data])
        let timestamp = Int(Date().timeIntervalSince1970)
        let key = SymmetricKey(data: Data(base64Encoded: String(secret.dropFirst("whsec_".count)))!)
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).".utf8) + body, using: key)
        return (body, [("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", "v1," + Data(mac).base64EncodedString())])
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Runs `body` with a running provider, stopped afterwards whether `body` succeeds or throws.
    static func with(_ body: (MailProviderDouble) async throws -> Void) async throws {
        let provider = try await MailProviderDouble()
        do {
            try await body(provider)
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }
}
