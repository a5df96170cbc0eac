import Crypto
import Foundation
import NotificationsDomain
import SurgeTestSupport
import Testing

@testable import NotificationsService

/// The e-mail provider's reports: how a Standard Webhooks signature is checked (also under Resend's Svix header
/// names), and what each kind of event means for the mail and its address.
@Suite("Notifications: e-mail provider reports (signatures, bounce kinds)", .tags(.unit), .kind(.unit))
struct EmailBounceTests {
    let secret = WebhookSecret(key: Array(repeating: 7, count: 24))
    let body = Array(#"{"type":"email.bounced","data":{"email_id":"m-1","to":["ann@example.com"]}}"#.utf8)
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func headers(_ signatures: String, id: String = "msg_1", timestamp: Int? = nil) -> WebhookVerifier.Headers {
        WebhookVerifier.Headers(id: id, timestamp: String(timestamp ?? Int(now.timeIntervalSince1970)), signatures: signatures)
    }

    func sign(_ body: [UInt8], id: String = "msg_1", timestamp: Int? = nil, with secret: WebhookSecret? = nil) -> String {
        WebhookSigner.signatureHeader(
            id: id, timestamp: timestamp ?? Int(now.timeIntervalSince1970), body: body, secrets: [secret ?? self.secret])
    }

    @Test("a message signed with the secret within 5 minutes passes; another secret, another body, id or time, or an old message does not")
    func signatures() {
        let verifier = WebhookVerifier(secret: secret)
        #expect(verifier.isValid(headers(sign(body)), body: body, now: now))
        #expect(verifier.isValid(headers(sign(body)), body: body, now: now.addingTimeInterval(299)))
        #expect(!verifier.isValid(headers(sign(body)), body: body, now: now.addingTimeInterval(301)), "too old: a replay")
        #expect(!verifier.isValid(headers(sign(body)), body: body, now: now.addingTimeInterval(-301)), "from the future")
        let other = WebhookSecret(key: Array(repeating: 8, count: 24))
        #expect(!verifier.isValid(headers(sign(body, with: other)), body: body, now: now))
        #expect(!verifier.isValid(headers(sign(body)), body: body + Array(" ".utf8), now: now), "the body is signed")
        #expect(!verifier.isValid(headers(sign(body), id: "msg_2"), body: body, now: now), "the id is signed")
        let later = Int(now.timeIntervalSince1970) + 1
        #expect(!verifier.isValid(headers(sign(body), timestamp: later), body: body, now: now), "the timestamp is signed")
        // During the provider's secret rotation a message carries one signature per secret: one good one suffices.
        let both = WebhookSigner.signatureHeader(id: "msg_1", timestamp: Int(now.timeIntervalSince1970), body: body, secrets: [other, secret])
        #expect(verifier.isValid(headers(both), body: body, now: now))
        for broken in ["", "v1", "v1,", "v2," + sign(body).dropFirst(3), "v1,not base64!", "timestamp garbage"] {
            #expect(!verifier.isValid(headers(broken), body: body, now: now), "\(broken)")
        }
        #expect(!verifier.isValid(WebhookVerifier.Headers(id: "msg_1", timestamp: "soon", signatures: sign(body)), body: body, now: now))
    }

    @Test("the signing headers are read as Standard Webhooks names them, else as Svix (Resend) does; an incomplete set is none")
    func headerNames() {
        let standard = ["webhook-id": "a", "webhook-timestamp": "1", "webhook-signature": "v1,x"]
        let svix = ["svix-id": "b", "svix-timestamp": "2", "svix-signature": "v1,y"]
        #expect(WebhookVerifier.headers { standard[$0] }?.id == "a")
        #expect(WebhookVerifier.headers { svix[$0] }?.id == "b")
        #expect(WebhookVerifier.headers { ["webhook-id": "a", "webhook-timestamp": "1"][$0] } == nil)
    }

    @Test("constant-time comparison: equal only for the same bytes, any length")
    func comparison() {
        #expect(WebhookVerifier.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!WebhookVerifier.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!WebhookVerifier.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(WebhookVerifier.constantTimeEqual([], []))
    }

    func event(_ json: String) throws -> EmailProviderEvent {
        try JSONDecoder().decode(EmailProviderEvent.self, from: Data(json.utf8))
    }

    @Test("a permanent bounce and a complaint suppress the address; a transient bounce and a delay are soft; other events are no bounce")
    func kinds() throws {
        let hard = try #require(try event(
            #"{"type":"email.bounced","created_at":"2026-11-25T04:00:00.125Z","data":{"email_id":"m-1","from":"x","to":[" Ann@Example.com "],"bounce":{"type":"Permanent","subType":"Suppressed","message":"..."}}}"#
        ).bounce)
        #expect(hard.kind == .hard && hard.providerMessageID == "m-1" && hard.addresses == ["ann@example.com"] && hard.detail == "Suppressed")
        #expect(abs((hard.reportedAt?.timeIntervalSince1970 ?? 0) - 1_795_579_200.125) < 0.001)
        #expect(hard.kind.suppressesAddress)
        #expect(try event(#"{"type":"email.bounced","data":{"to":["a@b.c"]}}"#).bounce?.kind == .hard, "a bounce is permanent unless it says otherwise")
        let transient = try event(#"{"type":"email.bounced","data":{"to":["a@b.c"],"bounce":{"type":"Transient","subType":"MailboxFull"}}}"#).bounce
        #expect(transient?.kind == .soft && transient?.kind.suppressesAddress == false && transient?.detail == "MailboxFull")
        #expect(try event(#"{"type":"email.delivery_delayed","data":{"email_id":"m-2"}}"#).bounce?.kind == .soft)
        let complaint = try #require(try event(#"{"type":"email.complained","data":{"email_id":"m-3","to":["a@b.c"]}}"#).bounce)
        #expect(complaint.kind == .complaint && complaint.kind.suppressesAddress)
        for other in ["email.sent", "email.delivered", "email.opened", "contact.created"] {
            #expect(try event(#"{"type":"\#(other)","data":{"email_id":"m-4"}}"#).bounce == nil, "\(other)")
        }
    }
}
