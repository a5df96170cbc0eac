import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import NotificationsService

/// Each controller's routes on the router `NotificationsService.addRoutes` builds, over PostgreSQL.
@Suite("Notifications: routes", .tags(.integration), .kind(.integration, needsDatabase: true))
struct NotificationsRouterTests {
    let ann = UUID(), ben = UUID()

    static func instant(_ text: String) -> Date { Timestamp.parse(text)! }

    @Test("the inbox: newest first with the unread count; read, all read, archived; the export; another's notification is 404; no caller is 401")
    func inbox() async throws {
        try await NotificationsRoutes.run { routes in
            try await routes.deliver(.badgeEarned(.english, badge: "First Step"), kind: .badgeEarned, to: ann, at: Self.instant("2026-11-20T09:00:00Z"))
            try await routes.deliver(.friendRequest(.english, from: "Ben"), kind: .friendRequest, to: ann, at: Self.instant("2026-11-20T10:00:00Z"))
            try await routes.deliver(.dailyReminder(.english), kind: .dailyReminder, to: ben, at: Self.instant("2026-11-20T11:00:00Z"))
            let listed = try await routes.send(.get, "/v1/me/notifications", as: ann)
            #expect(listed.status == .ok)
            let page = try listed.decode(NotificationPageView.self)
            #expect(page.items.map(\.kind) == ["friend-request", "badge-earned"])
            #expect(page.unread == 2 && page.nextCursor == nil)
            let (newest, oldest) = (page.items[0].notificationID, page.items[1].notificationID)
            let bens = try await routes.send(.get, "/v1/me/notifications", as: ben).decode(NotificationPageView.self).items[0].notificationID

            let read = try await routes.send(.post, "/v1/me/notifications/\(oldest.key)/read", as: ann)
            #expect(read.status == .ok)
            #expect(try read.decode(NotificationView.self).read)
            #expect(try await routes.send(.get, "/v1/me/notifications/unread-count", as: ann).decode(UnreadCountView.self).unread == 1)
            for target in ["/v1/me/notifications/\(bens.key)/read", "/v1/me/notifications/\(bens.key)/archive", "/v1/me/notifications/not-an-id/read"] {
                let refused = try await routes.send(.post, target, as: ann)
                #expect(refused.status == .notFound && refused.problem?.slug == "not-found", "\(target)")
            }

            let allRead = try await routes.send(.post, "/v1/me/notifications/read-all", as: ann)
            #expect(allRead.status == .ok)
            #expect(try allRead.decode(UnreadCountView.self).unread == 0)
            #expect(try await routes.send(.get, "/v1/me/notifications/unread-count", as: ben).decode(UnreadCountView.self).unread == 1)
            let archived = try await routes.send(.post, "/v1/me/notifications/\(newest.key)/archive", as: ann)
            #expect(archived.status == .ok)
            #expect(try archived.decode(NotificationView.self).archived)
            #expect(try await routes.send(.get, "/v1/me/notifications", as: ann).decode(NotificationPageView.self).items.map(\.notificationID) == [oldest])
            let export = try await routes.send(.get, "/internal/export", as: ann).decode(NotificationsExport.self)
            #expect(export.notifications.map(\.notificationID) == [newest, oldest], "archived ones too")

            for target in ["/v1/me/notifications", "/v1/me/notifications/unread-count", "/internal/export"] {
                let anonymous = try await routes.send(.get, target, as: nil)
                #expect(anonymous.status == .unauthorized && anonymous.problem?.slug == "unauthorized", "\(target)")
            }
        }
    }

    @Test("push devices: registered (again: the same device), listed, forgotten; a malformed token or platform is 422 naming it; another's device is 404")
    func pushTokens() async throws {
        try await NotificationsRoutes.run { routes in
            let deviceToken = "f3Jk9pQ2RwS:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"
            let device: [String: any Sendable] = ["platform": "fcm", "token": deviceToken]
            let registered = try await routes.send(.post, "/v1/me/push-tokens", as: ann, json: device)
            #expect(registered.status == .ok)
            let token = try registered.decode(PushTokenView.self)
            #expect(token.platform == .fcm)
            #expect(try await routes.send(.post, "/v1/me/push-tokens", as: ann, json: device).decode(PushTokenView.self).pushTokenID == token.pushTokenID)
            #expect(try await routes.send(.get, "/v1/me/push-tokens", as: ann).decode(PushTokenListView.self).items.map(\.pushTokenID) == [token.pushTokenID])
            #expect(try await routes.send(.get, "/v1/me/push-tokens", as: ben).decode(PushTokenListView.self).items.isEmpty)

            for (body, field) in [(["platform": "fcm", "token": "short"], "token"), (["platform": "sms", "token": deviceToken], "platform")] {
                let refused = try await routes.send(.post, "/v1/me/push-tokens", as: ann, json: body)
                #expect(refused.status == .unprocessableContent && refused.problem?.fields == [field], "\(body)")
            }
            let target = "/v1/me/push-tokens/\(token.pushTokenID.key)"
            #expect(try await routes.send(.delete, target, as: ben).problem?.slug == "not-found")
            #expect(try await routes.send(.delete, target, as: ann).status == .noContent)
            #expect(try await routes.send(.delete, target, as: ann).status == .notFound)
            #expect(try await routes.send(.get, "/v1/me/push-tokens", as: ann).decode(PushTokenListView.self).items.isEmpty)
            #expect(try await routes.send(.post, "/v1/me/push-tokens", as: nil, json: device).status == .unauthorized)
        }
    }

    @Test("a device registered by Ann, then by Ben, is Ben's only: gone from Ann's list, her queued push dropped, her next one not sent to it")
    func pushTokenChangesOwner() async throws {
        try await NotificationsRoutes.run { routes in
            let now = Date()
            try await routes.database.withConnection { connection in
                let store = RecipientStore(connection: connection, logger: routes.logger)
                for (userID, name) in [(ann, "Ann"), (ben, "Ben")] {
                    try await store.save(Recipient(userID: userID, displayName: name, timeZone: "Europe/Rome", locale: "en", enabled: true), now: now)
                }
            }
            let inbox = Inbox(outbox: Outbox(service: "notifications"), pushPlatforms: [.fcm], webhooks: WebhookQueue(clock: routes.clock), clock: routes.clock)
            let deliver = { @Sendable (userID: UUID) in
                _ = try await routes.database.transaction(logger: routes.logger) { connection in
                    try await inbox.deliver(
                        .friendRequest(.english, from: "Cleo"), kind: .friendRequest, key: UUID().key, to: userID, at: Date(), connection: connection,
                        logger: routes.logger)
                }
            }
            let device: [String: any Sendable] = ["platform": "fcm", "token": "f3Jk9pQ2RwS:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"]
            let anns = try await routes.send(.post, "/v1/me/push-tokens", as: ann, json: device).decode(PushTokenView.self)
            try await deliver(ann)
            let pushesTo = { @Sendable (userID: UUID) in
                try await routes.count(
                    "SELECT count(*) FROM push_deliveries d JOIN inbox i USING (notification_id) WHERE i.user_id = \(userID)")
            }
            #expect(try await pushesTo(ann) == 1)

            let bens = try await routes.send(.post, "/v1/me/push-tokens", as: ben, json: device)
            #expect(bens.status == .ok)
            let token = try bens.decode(PushTokenView.self)
            #expect(try await routes.send(.get, "/v1/me/push-tokens", as: ann).decode(PushTokenListView.self).items.isEmpty)
            #expect(try await routes.send(.get, "/v1/me/push-tokens", as: ben).decode(PushTokenListView.self).items.map(\.pushTokenID) == [token.pushTokenID])
            #expect(try await routes.send(.delete, "/v1/me/push-tokens/\(anns.pushTokenID.key)", as: ann).status == .notFound)
            #expect(try await pushesTo(ann) == 0, "Ann's queued push no longer goes to Ben's phone")
            try await deliver(ann)
            try await deliver(ben)
            #expect(try await pushesTo(ann) == 0)
            #expect(try await pushesTo(ben) == 1)
            #expect(try await routes.count("SELECT count(*) FROM push_tokens") == 1)
        }
    }

    @Test("webhooks: made with a secret and a Location, listed, read, rotated, re-enabled, deleted; another's is 404; a refused URL names `url`; a group subscription only for a member")
    func webhooks() async throws {
        try await NotificationsRoutes.run { routes in
            // An address literal of a public address: accepted without a lookup, and never called here.
            let url = "https://1.1.1.1/hooks/surge"
            let created = try await routes.send(.post, "/v1/webhooks", as: ann, json: ["url": url])
            #expect(created.status == .created)
            let made = try created.decode(WebhookWithSecretView.self)
            let id = made.webhook.webhookID
            #expect(created.headers[.location] == "/v1/webhooks/\(id.key)")
            #expect(made.secret.hasPrefix("whsec_") && made.webhook.url == url && made.webhook.status == .active)
            #expect(try await routes.send(.get, "/v1/webhooks", as: ann).decode(WebhookPageView.self).items.map(\.webhookID) == [id])
            #expect(try await routes.send(.get, "/v1/webhooks/\(id.key)", as: ann).decode(WebhookView.self).recentAttempts?.isEmpty == true)

            let rotated = try await routes.send(.post, "/v1/webhooks/\(id.key)/rotate-secret", as: ann).decode(WebhookWithSecretView.self)
            #expect(rotated.secret != made.secret && rotated.webhook.previousSecretValidUntil != nil)
            #expect(try await routes.send(.post, "/v1/webhooks/\(id.key)/enable", as: ann).decode(WebhookView.self).status == .active)
            for (method, target) in [
                (HTTPRequest.Method.get, "/v1/webhooks/\(id.key)"), (.post, "/v1/webhooks/\(id.key)/rotate-secret"), (.post, "/v1/webhooks/\(id.key)/enable"),
                (.delete, "/v1/webhooks/\(id.key)"),
            ] {
                #expect(try await routes.send(method, target, as: ben).problem?.slug == "not-found", "\(method) \(target)")
            }
            #expect(try await routes.send(.get, "/v1/webhooks", as: ben).decode(WebhookPageView.self).items.isEmpty)

            let household = UUID()
            try await routes.join(household, ann)
            let group = try await routes.send(.post, "/v1/webhooks", as: ann, json: ["url": url, "groupID": household.key])
            #expect(group.status == .created)
            #expect(try group.decode(WebhookWithSecretView.self).webhook.groupID == household)
            let outsider = try await routes.send(.post, "/v1/webhooks", as: ben, json: ["url": url, "groupID": household.key])
            #expect(outsider.status == .notFound)
            let refused = try await routes.send(.post, "/v1/webhooks", as: ann, json: ["url": "https://user:secret@1.1.1.1/hook"])
            #expect(refused.status == .unprocessableContent)
            #expect(refused.problem?.slug == "webhook-target-refused" && refused.problem?.fields == ["url"])
            #expect(try await routes.send(.post, "/v1/webhooks", as: nil, json: ["url": url]).status == .unauthorized)

            #expect(try await routes.send(.delete, "/v1/webhooks/\(id.key)", as: ann).status == .noContent)
            #expect(try await routes.send(.get, "/v1/webhooks/\(id.key)", as: ann).status == .notFound)
        }
    }

    @Test("an account mail from identity is queued; one lacking what its kind needs is 422 naming `kind`; an unsigned call is 401")
    func mail() async throws {
        try await NotificationsRoutes.run { routes in
            let reset = AccountMail(
                mailID: UUID(), kind: .passwordReset, to: "ann@example.com", displayName: "Ann", locale: "it", link: "https://surge.example/reset#t",
                validForMinutes: 30)
            let queued = try await routes.send(.post, AccountMail.path, as: nil, body: try SurgeJSON.encode(reset))
            #expect(queued.status == .accepted)
            #expect(try await routes.count("SELECT count(*) FROM email_deliveries WHERE mail_id = \(reset.mailID) AND status = 'pending'") == 1)

            var linkless = reset
            linkless.mailID = UUID()
            linkless.link = nil
            let refused = try await routes.send(.post, AccountMail.path, as: nil, body: try SurgeJSON.encode(linkless))
            #expect(refused.status == .unprocessableContent && refused.problem?.fields == ["kind"])
            let unsigned = try await routes.client.executeRequest(
                uri: AccountMail.path, method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(bytes: try SurgeJSON.encode(reset)))
            #expect(unsigned.status == .unauthorized && unsigned.problem?.slug == "unauthenticated-call")
            #expect(try await routes.count("SELECT count(*) FROM email_deliveries") == 1)
        }
    }

    /// A report as the provider sends it: signed with `secret` now.
    static func providerReport(_ json: String, id: String) -> (body: Data, headers: HTTPFields) {
        let body = Array(json.utf8)
        let timestamp = Int(Date().timeIntervalSince1970)
        let signature = WebhookSigner.signatureHeader(id: id, timestamp: timestamp, body: body, secrets: [NotificationsRoutes.emailWebhookSecret])
        return (
            Data(body),
            [HTTPField.Name("webhook-id")!: id, HTTPField.Name("webhook-timestamp")!: String(timestamp), HTTPField.Name("webhook-signature")!: signature]
        )
    }

    @Test("e-mail provider reports: a complaint about a mail not ours suppresses the address it names; one naming no recipient is 422 on `data.to`; without the secret configured, every report is 401")
    func providerReports() async throws {
        let path = "/v1/email-provider/events"
        let complaint = Self.providerReport(#"{"type":"email.complained","data":{"email_id":"elsewhere-1","to":["Ann@Example.com"]}}"#, id: "msg_1")
        try await NotificationsRoutes.run { routes in
            #expect(try await routes.send(.post, path, as: nil, body: complaint.body, headers: complaint.headers).status == .noContent)
            #expect(try await routes.count("SELECT count(*) FROM email_suppressions WHERE address = 'ann@example.com' AND kind = 'complaint'") == 1)
            let nobody = Self.providerReport(#"{"type":"email.bounced","data":{"email_id":"elsewhere-2"}}"#, id: "msg_2")
            let refused = try await routes.send(.post, path, as: nil, body: nobody.body, headers: nobody.headers)
            #expect(refused.status == .unprocessableContent && refused.problem?.fields == ["data.to"])
        }
        try await NotificationsRoutes.run(environment: [:]) { routes in
            let refused = try await routes.send(.post, path, as: nil, body: complaint.body, headers: complaint.headers)
            #expect(refused.status == .unauthorized && refused.problem?.slug == "invalid-webhook-signature")
            #expect(try await routes.count("SELECT count(*) FROM email_bounces") == 0)
        }
    }
}
