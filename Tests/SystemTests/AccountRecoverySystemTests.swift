import Crypto
import Foundation
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

/// Account recovery as a user meets it, through the gateway, with identity, notifications and the gateway as
/// processes and `MailProviderDouble` as the e-mail provider: verification after registration, a password reset
/// from the mail's link that signs every device out and works once, the same answer and no mail for an unknown
/// address, an address change that waits for its verification, and sessions a user lists and ends. Every revocation
/// also ends the access tokens of the revoked sessions at the gateway within seconds, not at their expiry.
@Suite("Identity: password reset, e-mail verification and sessions through the gateway", .tags(.system), .kind(.system), .serialized)
struct AccountRecoverySystemTests {
    static let password = "first-pass-2026"
    static let newPassword = "second-pass-2026"

    @Test("forgot password → one mail → its link sets a new password once and signs out every device; unknown address: same answer, no mail; an address change waits for verification; ended sessions cannot refresh, and their access tokens are refused at the gateway within seconds")
    func recovery() async throws {
        try await MailProviderDouble.with(run)
    }

    func run(_ provider: MailProviderDouble) async throws {
        try await withTestStack("recovery") { stack in
            try await stack.start(
                "notifications",
                environment: [
                    "EMAIL_PROVIDER_URL": provider.url, "EMAIL_PROVIDER_TOKEN": MailProviderDouble.token, "EMAIL_FROM": "Surge <no-reply@surge.test>",
                    "EMAIL_INTERVAL_MS": "20",
                ])
            try await stack.start("identity", environment: ["BCRYPT_COST": "4", "MAIL_RELAY_INTERVAL_MS": "20"])
            try await stack.start("gateway")
            let http = try stack.http()
            let email = "ann.rossi@example.com"

            // Registration sends a verification mail, in Italian for an Italian locale, plain text and HTML.
            let registered = try await http.post(
                "/v1/auth/register",
                json: [
                    "email": email, "password": Self.password, "displayName": "Ann", "timeZone": "Europe/Rome", "locale": "it-IT",
                    "deviceName": "Ann's phone",
                ])
            #expect(registered.status == 201, "\(registered.text)")
            let phone = try TestSession(registered)
            let verification = try await eventually("the verification mail") { provider.mails(to: email).first }
            #expect(verification.subject == "Conferma il tuo indirizzo e-mail")
            #expect(verification.from == "Surge <no-reply@surge.test>")
            #expect(verification.headers["authorization"] == "Bearer \(MailProviderDouble.token)")
            #expect(verification.headers["idempotency-key"] != nil)
            #expect(verification.html.contains("<a href=\"https://surge.example/verify-email#token="), "\(verification.html)")
            let verificationToken = try #require(verification.token)
            let ann = http.authorized(phone.accessToken)
            #expect(try await ann.get("/v1/me/email").json["verified"] as? Bool == false, "the account works unverified")
            #expect(try await http.post("/v1/auth/verify-email", json: ["token": verificationToken]).status == 204)
            let verified = try await ann.get("/v1/me/email").json
            #expect(verified["verified"] as? Bool == true && verified["email"] as? String == email, "\(verified)")
            try await Self.expectInvalidLink(try await http.post("/v1/auth/verify-email", json: ["token": verificationToken]))

            // A second device.
            let laptopSignIn = try await http.post("/v1/auth/sign-in", json: ["email": email, "password": Self.password, "deviceName": "Laptop"])
            #expect(laptopSignIn.status == 200, "\(laptopSignIn.text)")
            let laptop = try TestSession(laptopSignIn)
            let devices = try await ann.get("/v1/me/sessions").json["items"] as? [[String: Any]] ?? []
            #expect(devices.compactMap { $0["name"] as? String } == ["Ann's phone", "Laptop"], "\(devices)")
            #expect(devices.compactMap { $0["current"] as? Bool } == [true, false], "the phone asked: \(devices)")
            let fromLaptop = try await http.authorized(laptop.accessToken).get("/v1/me/sessions").json["items"] as? [[String: Any]] ?? []
            #expect(fromLaptop.compactMap { $0["current"] as? Bool } == [false, true], "the laptop asked: \(fromLaptop)")

            // Forgot password: an unknown address and a known one get the same answer; only the known one gets a mail.
            let unknown = try await http.post("/v1/auth/forgot-password", json: ["email": "nobody@example.com"])
            let known = try await http.post("/v1/auth/forgot-password", json: ["email": "  Ann.Rossi@Example.com "])
            #expect(unknown.status == 202 && known.status == 202, "\(unknown.text) \(known.text)")
            #expect(unknown.body == known.body && unknown.header("content-type") == known.header("content-type"))
            let reset = try await eventually("the reset mail") { provider.mails(to: email).first { $0.subject == "Reimposta la password di Surge" } }
            #expect(reset.text.contains("https://surge.example/reset-password#token=") && reset.text.contains("30 minuti"), "\(reset.text)")
            let resetToken = try #require(reset.token)
            try await waitUntil("identity handled the unknown address's request") {
                try await stack.database.count(
                    "SELECT count(*) FROM identity.mail_requests WHERE email = 'nobody@example.com' AND handled_at IS NOT NULL") == 1
            }
            #expect(provider.mails(to: "nobody@example.com").isEmpty)
            #expect(provider.mails(to: email).count == 2, "one verification, one reset")

            // The token travels in no event and no log, and is stored nowhere as it is; the sent mail's content is erased.
            try await waitUntil("the mail's content is erased once sent") {
                try await stack.database.count("SELECT count(*) FROM notifications.email_deliveries WHERE status = 'sent' AND text_body IS NULL") == 2
            }
            for token in [resetToken, verificationToken] {
                #expect(try await stack.database.count("SELECT count(*) FROM identity.outbox WHERE payload::text LIKE \("%" + token + "%")") == 0)
                #expect(try await stack.database.count("SELECT count(*) FROM notifications.outbox WHERE payload::text LIKE \("%" + token + "%")") == 0)
                #expect(try await stack.database.count("SELECT count(*) FROM notifications.email_deliveries WHERE text_body LIKE \("%" + token + "%")") == 0)
                for log in try FileManager.default.contentsOfDirectory(at: stack.logDirectory, includingPropertiesForKeys: nil) {
                    #expect(!(try String(contentsOf: log, encoding: .utf8)).contains(token), "\(log.lastPathComponent) logs a token")
                }
            }

            // Until the reset, both devices' access tokens work; each names its session.
            for device in [laptop, phone] { try await Self.expectAccepted(device.accessToken, http: http) }
            let laptopSession = try #require(Self.sessionID(of: laptop.accessToken))
            let listedSessions: [String] = devices.compactMap { ($0["sessionID"] as? String)?.lowercased() }
            #expect(listedSessions.contains(laptopSession), "\(devices)")

            // A password that breaks the rules is refused without spending the token; then the token sets the new one.
            let weak = try await http.post("/v1/auth/reset-password", json: ["token": resetToken, "password": "aaaaaaaaaaaa"])
            #expect(weak.status == 422, "\(weak.text)")
            #expect(try await http.post("/v1/auth/reset-password", json: ["token": resetToken, "password": Self.newPassword]).status == 204)
            for device in [laptop, phone] {
                let refused = try await http.post("/v1/auth/refresh", json: ["refreshToken": device.refreshToken])
                #expect(refused.status == 401, "every device is signed out: \(refused.text)")
            }
            // ... and their access tokens, though minutes from expiry, are refused by the gateway within seconds.
            for device in [laptop, phone] { try await Self.expectRefused(device.accessToken, "an access token of before the reset", http: http) }
            let revokedByReset = try await stack.database.count(
                """
                SELECT count(*) FROM identity.outbox WHERE type = 'surge.identity.sessions.revoked.v1'
                AND lower(payload::text) LIKE \("%" + laptopSession + "%") AND payload::text LIKE '%password-reset%'
                """)
            #expect(revokedByReset == 1)
            for token in [laptop.refreshToken, phone.refreshToken] {
                #expect(try await stack.database.count("SELECT count(*) FROM identity.outbox WHERE payload::text LIKE \("%" + token + "%")") == 0)
            }
            try await Self.expectInvalidLink(try await http.post("/v1/auth/reset-password", json: ["token": resetToken, "password": "third-pass-2026"]))
            #expect(try await http.post("/v1/auth/sign-in", json: ["email": email, "password": Self.password]).status == 401)
            let current = try TestSession(try await http.post("/v1/auth/sign-in", json: ["email": email, "password": Self.newPassword, "deviceName": "Tablet"]))
            let me = http.authorized(current.accessToken)
            try await Self.expectAccepted(current.accessToken, http: http)

            // An address change takes effect only once the new address is verified; the old address is told.
            let newEmail = "ann.nuova@example.com"
            #expect(try await me.post("/v1/me/email", json: ["email": newEmail, "password": "wrong-password-1"]).status == 401)
            let change = try await me.post("/v1/me/email", json: ["email": newEmail, "password": Self.newPassword])
            #expect(change.status == 202, "\(change.text)")
            #expect(change.json["email"] as? String == email && change.json["pendingEmail"] as? String == newEmail, "\(change.text)")
            #expect(try await http.post("/v1/auth/sign-in", json: ["email": newEmail, "password": Self.newPassword]).status == 401)
            let confirm = try await eventually("the new address's verification mail") { provider.mails(to: newEmail).first }
            #expect(try await http.post("/v1/auth/verify-email", json: ["token": try #require(confirm.token)]).status == 204)
            let changed = try await me.get("/v1/me/email").json
            #expect(changed["email"] as? String == newEmail && changed["verified"] as? Bool == true && (changed["pendingEmail"] as? String) == nil, "\(changed)")
            let notice = try await eventually("the old address's notice") {
                provider.mails(to: email).first { $0.subject == "Il tuo indirizzo e-mail di Surge è cambiato" }
            }
            #expect(notice.text.contains("an***@example.com") && notice.token == nil, "\(notice.text)")
            #expect(try await http.post("/v1/auth/sign-in", json: ["email": newEmail, "password": Self.newPassword]).status == 200)

            // Sessions: ending one refuses its refresh token; ending the others keeps this one.
            let second = try TestSession(try await http.post("/v1/auth/sign-in", json: ["email": newEmail, "password": Self.newPassword, "deviceName": "Second"]))
            let third = try TestSession(try await http.post("/v1/auth/sign-in", json: ["email": newEmail, "password": Self.newPassword, "deviceName": "Third"]))
            let listed = try await me.get("/v1/me/sessions").json["items"] as? [[String: Any]] ?? []
            let secondID = try #require(listed.first { $0["name"] as? String == "Second" }?["sessionID"] as? String, "\(listed)")
            #expect(Self.sessionID(of: second.accessToken) == secondID.lowercased())
            for session in [second, third] { try await Self.expectAccepted(session.accessToken, http: http) }
            #expect(try await me.delete("/v1/me/sessions/\(secondID)").status == 204)
            #expect(try await http.post("/v1/auth/refresh", json: ["refreshToken": second.refreshToken]).status == 401)
            // The ended device's access token is refused; the same user's other sessions keep working.
            try await Self.expectRefused(second.accessToken, "the ended session's access token", http: http)
            for session in [third, current] { try await Self.expectAccepted(session.accessToken, http: http) }
            #expect(try await me.delete("/v1/me/sessions/\(secondID)").status == 404)
            #expect(try await me.delete("/v1/me/sessions/\(UUID().uuidString)").status == 404)
            #expect(try await me.post("/v1/me/sessions/end-others", json: ["refreshToken": second.refreshToken]).status == 401)
            #expect(try await me.post("/v1/me/sessions/end-others", json: ["refreshToken": current.refreshToken]).status == 204)
            #expect(try await http.post("/v1/auth/refresh", json: ["refreshToken": third.refreshToken]).status == 401)
            try await Self.expectRefused(third.accessToken, "an access token of a session ended with the others", http: http)
            try await Self.expectAccepted(current.accessToken, http: http)
            let kept = try await http.post("/v1/auth/refresh", json: ["refreshToken": current.refreshToken])
            #expect(kept.status == 200, "\(kept.text)")
            let renewed = try TestSession(kept)
            #expect((try await me.get("/v1/me/sessions").json["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Tablet"])

            // Changing the password needs the current one and signs every device out; this one gets new tokens.
            #expect(try await me.post("/v1/me/password", json: ["currentPassword": "wrong-password-1", "newPassword": "fourth-pass-2026"]).status == 401)
            let changedPassword = try await me.post("/v1/me/password", json: ["currentPassword": Self.newPassword, "newPassword": "fourth-pass-2026"])
            #expect(changedPassword.status == 200, "\(changedPassword.text)")
            #expect(try await http.post("/v1/auth/refresh", json: ["refreshToken": renewed.refreshToken]).status == 401)
            #expect(try await http.post("/v1/auth/refresh", json: ["refreshToken": try TestSession(changedPassword).refreshToken]).status == 200)
            try await Self.expectRefused(renewed.accessToken, "an access token of before the password change", http: http)
            try await Self.expectAccepted(try TestSession(changedPassword).accessToken, http: http)

            // A reset goes only to a verified address: an unverified one gets a verification link instead, and once it is
            // followed, asking again sends the reset link.
            let bob = "bob@example.com"
            let bobRegistered = try await http.post(
                "/v1/auth/register", json: ["email": bob, "password": Self.password, "displayName": "Bob", "timeZone": "Europe/London"])
            #expect(bobRegistered.status == 201, "\(bobRegistered.text)")
            _ = try await eventually("Bob's verification mail") { provider.mails(to: bob).first }
            #expect(try await http.post("/v1/auth/forgot-password", json: ["email": bob]).status == 202)
            let instead = try await eventually("a second verification mail instead of a reset") { provider.mails(to: bob).dropFirst().first }
            #expect(instead.subject == "Confirm your e-mail address" && !instead.text.contains("reset-password"), "\(instead.text)")
            #expect(try await http.post("/v1/auth/verify-email", json: ["token": try #require(instead.token)]).status == 204)
            #expect(try await http.post("/v1/auth/forgot-password", json: ["email": bob]).status == 202)
            let bobReset = try await eventually("Bob's reset mail") { provider.mails(to: bob).first { $0.subject == "Reset your Surge password" } }
            #expect(bobReset.text.contains("https://surge.example/reset-password#token=") && bobReset.text.contains("30 minutes"), "\(bobReset.text)")

            // Per address, at most three reset requests an hour lead anywhere; the others are answered alike.
            for _ in 0..<5 {
                #expect(try await http.post("/v1/auth/forgot-password", json: ["email": "many@example.com"]).status == 202)
            }
            #expect(try await stack.database.count("SELECT count(*) FROM identity.mail_requests WHERE email = 'many@example.com'") == 3)

            // Bad input: problems, never a 500.
            for (path, body) in [
                ("/v1/auth/forgot-password", #"{"email":"not an address"}"#), ("/v1/auth/forgot-password", #"{"email":"a@example.com","x":1}"#),
                ("/v1/auth/reset-password", #"{"token":"short","password":"whatever-2026"}"#), ("/v1/auth/verify-email", #"{"token":42}"#),
                ("/v1/auth/verify-email", "not json"), ("/v1/auth/sign-in", #"{"email":"a@example.com","password":"x","deviceName":" "}"#),
            ] {
                let refused = try await http.send(.POST, path, body: Data(body.utf8))
                #expect((400..<500).contains(refused.status) && refused.header("content-type") == "application/problem+json", "\(path) \(body): \(refused.text)")
            }
            try await Self.expectInvalidLink(
                try await http.post("/v1/auth/verify-email", json: ["token": String(repeating: "A", count: 64)]))
        }
    }

    @Test("the live streams of a revoked session end within a second of the gateway learning of it, browsers' too; the same user's other sessions and other users keep theirs")
    func revokedSessionsStreamsEnd() async throws {
        try await withTestStack("recovery-streams") { stack in
            try await stack.start("identity", environment: ["BCRYPT_COST": "4"])
            try await stack.start("gateway", environment: ["STREAM_HEARTBEAT_SECONDS": "1"])
            let http = try stack.http()
            let email = "cara.bianchi@example.com"
            let registered = try await http.post(
                "/v1/auth/register",
                json: ["email": email, "password": Self.password, "displayName": "Cara", "timeZone": "Europe/Rome", "deviceName": "Phone"])
            #expect(registered.status == 201, "\(registered.text)")
            let phone = try TestSession(registered)
            let laptop = try TestSession(
                try await http.post("/v1/auth/sign-in", json: ["email": email, "password": Self.password, "deviceName": "Laptop"]))
            let dan = try TestSession(try await http.post("/v1/auth/guest", json: ["displayName": "Dan", "timeZone": "Europe/Rome"]))
            let phoneSession = try #require(Self.sessionID(of: phone.accessToken))

            // The phone's app (bearer token) and its browser tab (a ticket issued to the phone's token), the laptop, and
            // another user.
            let phoneApp = try await Self.openStream(http, bearer: phone.accessToken)
            let phoneTab = try await Self.openStream(http, ticketOf: phone.accessToken)
            let laptopApp = try await Self.openStream(http, bearer: laptop.accessToken)
            let danApp = try await Self.openStream(http, bearer: dan.accessToken)
            defer { for stream in [phoneApp, phoneTab, laptopApp, danApp] { stream.close() } }
            let spareTicket = try #require(try await http.authorized(phone.accessToken).post("/v1/stream/tickets").json["ticket"] as? String)

            // The laptop signs the phone out.
            #expect(try await http.authorized(laptop.accessToken).delete("/v1/me/sessions/\(phoneSession)").status == 204)
            try await waitUntil("the gateway recorded the phone's revocation", timeout: .seconds(10), every: .milliseconds(10)) {
                try await stack.database.count("SELECT count(*) FROM gateway.revoked_sessions WHERE session_id = \(UUID(uuidString: phoneSession)!)") == 1
            }
            let learned = ContinuousClock.now
            for stream in [phoneApp, phoneTab] {
                try await stream.waitUntilEnded(timeout: .seconds(5))
                #expect(stream.events.last?.name == "session-ended", "\(stream.events)")
            }
            let ended = ContinuousClock.now - learned
            #expect(ended < .milliseconds(1500), "the phone's streams ended \(ended) after the gateway recorded the revocation")

            // The laptop's and Dan's streams stay open: each keeps receiving heartbeats.
            let heartbeats = (laptopApp.heartbeats, danApp.heartbeats)
            try await waitUntil("the other streams' next heartbeats", timeout: .seconds(5)) {
                laptopApp.heartbeats >= heartbeats.0 + 2 && danApp.heartbeats >= heartbeats.1 + 2
            }
            #expect(!laptopApp.hasEnded && !danApp.hasEnded)
            #expect(!laptopApp.events.contains { $0.name == "session-ended" } && !danApp.events.contains { $0.name == "session-ended" })

            // The phone opens no new stream, with its token or a ticket it got before.
            let again = try await http.authorized(phone.accessToken).get("/v1/stream")
            #expect(again.status == 401 && (again.json["type"] as? String)?.hasSuffix("/invalid-token") == true, "\(again.text)")
            let tab = try await http.get("/v1/stream?ticket=\(spareTicket)")
            #expect(tab.status == 401 && (tab.json["type"] as? String)?.hasSuffix("/invalid-stream-ticket") == true, "\(tab.text)")

            // Signing out ends the laptop's stream the same way; Dan's stays.
            #expect(try await http.post("/v1/auth/sign-out", json: ["refreshToken": laptop.refreshToken]).status == 204)
            try await laptopApp.waitUntilEnded(timeout: .seconds(5))
            #expect(laptopApp.events.last?.name == "session-ended")
            let danHeartbeats = danApp.heartbeats
            try await waitUntil("Dan's next heartbeat", timeout: .seconds(5)) { danApp.heartbeats > danHeartbeats }
            #expect(!danApp.hasEnded)
        }
    }

    @Test("the provider's signed reports through the gateway: unsigned ones refused; a soft bounce recorded and mail goes on; a hard bounce recorded once on its mail and nothing more is sent to the address")
    func bounces() async throws {
        try await MailProviderDouble.with(runBounces)
    }

    func runBounces(_ provider: MailProviderDouble) async throws {
        try await withTestStack("recovery-bounces") { stack in
            try await stack.start(
                "notifications",
                environment: [
                    "EMAIL_PROVIDER_URL": provider.url, "EMAIL_PROVIDER_TOKEN": MailProviderDouble.token, "EMAIL_INTERVAL_MS": "20",
                    "EMAIL_WEBHOOK_SECRET": MailProviderDouble.webhookSecret,
                ])
            try await stack.start("identity", environment: ["BCRYPT_COST": "4", "MAIL_RELAY_INTERVAL_MS": "20"])
            try await stack.start("gateway")
            let http = try stack.http()
            let email = "eve.verdi@example.com"
            let registered = try await http.post(
                "/v1/auth/register", json: ["email": email, "password": Self.password, "displayName": "Eve", "timeZone": "Europe/Rome"])
            #expect(registered.status == 201, "\(registered.text)")
            let welcome = try await eventually("the verification mail") { provider.mails(to: email).first }
            try await waitUntil("the mail is recorded as sent with the provider's id") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.email_deliveries WHERE status = 'sent' AND provider_message_id = \(welcome.providerID)") == 1
            }
            let path = "/v1/email-provider/events"

            // Unsigned, signed with another secret, or signed over another body: 401, nothing recorded.
            let soft = MailProviderDouble.report("email.delivery_delayed", about: welcome)
            let otherSecret = "whsec_" + Data(repeating: 1, count: 24).base64EncodedString()
            let forged = MailProviderDouble.report("email.bounced", about: welcome, secret: otherSecret)
            let refusals: [(Data, [(String, String)])] = [(soft.body, []), (forged.body, forged.headers), (Data(soft.body.reversed()), soft.headers)]
            for (body, headers) in refusals {
                let refused = try await http.send(.POST, path, body: body, headers: headers)
                #expect(refused.status == 401 && refused.header("content-type") == "application/problem+json", "\(refused.text)")
                #expect((refused.json["type"] as? String)?.hasSuffix("/invalid-webhook-signature") == true, "\(refused.text)")
            }
            #expect(try await stack.database.count("SELECT count(*) FROM notifications.email_bounces") == 0)

            // A soft bounce is recorded on its mail; the address still gets mail.
            #expect(try await http.send(.POST, path, body: soft.body, headers: soft.headers).status == 204)
            #expect(
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.email_deliveries WHERE provider_message_id = \(welcome.providerID) AND bounce = 'soft'") == 1)
            #expect(try await stack.database.count("SELECT count(*) FROM notifications.email_suppressions") == 0)
            #expect(try await http.post("/v1/auth/forgot-password", json: ["email": email]).status == 202)
            let second = try await eventually("a mail after the soft bounce") { provider.mails(to: email).dropFirst().first }
            try await waitUntil("the second mail is recorded as sent") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.email_deliveries WHERE status = 'sent' AND provider_message_id = \(second.providerID)") == 1
            }

            // A hard bounce of that mail, reported twice (the provider retries): recorded once on it, the address suppressed.
            let hard = MailProviderDouble.report("email.bounced", about: second, bounce: ["type": "Permanent", "subType": "General"])
            for _ in 0..<2 { #expect(try await http.send(.POST, path, body: hard.body, headers: hard.headers).status == 204) }
            #expect(
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.email_bounces b JOIN notifications.email_deliveries d USING (mail_id) WHERE d.provider_message_id = \(second.providerID) AND b.kind = 'hard' AND d.bounce = 'hard'"
                ) == 1)
            #expect(try await stack.database.count("SELECT count(*) FROM notifications.email_suppressions WHERE address = \(email) AND kind = 'hard'") == 1)

            // Nothing more goes to the address: the next mail fails as suppressed without reaching the provider.
            #expect(try await http.post("/v1/auth/forgot-password", json: ["email": email]).status == 202)
            try await waitUntil("the next mail is refused as suppressed") {
                try await stack.database.count(
                    "SELECT count(*) FROM notifications.email_deliveries WHERE address = \(email) AND status = 'failed' AND last_error = 'email-suppressed'") == 1
            }
            #expect(provider.mails(to: email).count == 2)

            // Signed events of other kinds are acknowledged and ignored; a signed body that is no event is 400.
            let delivered = MailProviderDouble.report("email.delivered", about: second)
            #expect(try await http.send(.POST, path, body: delivered.body, headers: delivered.headers).status == 204)
            #expect(try await stack.database.count("SELECT count(*) FROM notifications.email_bounces") == 2)
            let garbage = Data("not json".utf8)
            let timestamp = String(Int(Date().timeIntervalSince1970))
            let key = SymmetricKey(data: Data(base64Encoded: String(MailProviderDouble.webhookSecret.dropFirst("whsec_".count)))!)
            let mac = HMAC<SHA256>.authenticationCode(for: Data("msg_garbage.\(timestamp).".utf8) + garbage, using: key)
            let malformed = try await http.send(
                .POST, path, body: garbage,
                headers: [("webhook-id", "msg_garbage"), ("webhook-timestamp", timestamp), ("webhook-signature", "v1," + Data(mac).base64EncodedString())])
            #expect(malformed.status == 400 && (malformed.json["type"] as? String)?.hasSuffix("/malformed-body") == true, "\(malformed.text)")
            let secretText = String(MailProviderDouble.webhookSecret.dropFirst("whsec_".count))
            for log in try FileManager.default.contentsOfDirectory(at: stack.logDirectory, includingPropertiesForKeys: nil) {
                #expect(!(try String(contentsOf: log, encoding: .utf8)).contains(secretText), "\(log.lastPathComponent) logs the webhook secret")
            }
        }
    }

    /// A stream through the gateway, once it is subscribed (`ready`).
    static func openStream(_ http: TestHTTP, bearer token: String) async throws -> EventStreamClient {
        let stream = try await EventStreamClient.connect(http.baseURL + "/v1/stream", headers: [("Authorization", "Bearer \(token)")])
        #expect(stream.status == 200)
        try await stream.waitFor("ready") { $0.name == "ready" }
        return stream
    }

    /// A browser's stream: opened with a ticket issued to the token.
    static func openStream(_ http: TestHTTP, ticketOf token: String) async throws -> EventStreamClient {
        let issued = try await http.authorized(token).post("/v1/stream/tickets")
        let ticket = try #require(issued.json["ticket"] as? String, "\(issued.text)")
        let stream = try await EventStreamClient.connect(http.baseURL + "/v1/stream?ticket=\(ticket)")
        #expect(stream.status == 200)
        try await stream.waitFor("ready") { $0.name == "ready" }
        return stream
    }

    /// The gateway lets the token through.
    static func expectAccepted(_ token: String, http: TestHTTP) async throws {
        let response = try await http.authorized(token).get("/v1/me")
        #expect(response.status == 200, "\(response.text)")
    }

    /// Waits, at most five seconds, until the gateway refuses the token as it refuses an expired one: identity's
    /// `SessionsRevoked` has reached it and one refresh of its memory (500 ms) has passed.
    static func expectRefused(_ token: String, _ what: String, http: TestHTTP) async throws {
        try await waitUntil("\(what) is refused", timeout: .seconds(5), every: .milliseconds(100)) {
            let response = try await http.authorized(token).get("/v1/me")
            return response.status == 401 && (response.json["type"] as? String)?.hasSuffix("/invalid-token") == true
        }
    }

    /// The `sid` claim of an access token (not verified: the gateway does that).
    static func sessionID(of token: String) -> String? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return nil }
        return claims["sid"] as? String
    }

    static func expectInvalidLink(_ response: TestResponse) async throws {
        #expect(response.status == 404, "\(response.text)")
        #expect((response.json["type"] as? String)?.hasSuffix("/invalid-link-token") == true, "\(response.text)")
    }
}
