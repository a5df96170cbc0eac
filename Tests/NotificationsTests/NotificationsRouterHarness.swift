import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport

@testable import NotificationsService

/// The service's router over a fresh, migrated database, called as the gateway calls it: no broker, no consumer and
/// no background services.
struct NotificationsRoutes: Sendable {
    let client: any TestClientProtocol
    let database: PostgresClient
    let signer: InternalCallSigner
    let clock: ServiceClock
    let logger: Logger

    /// The secret the e-mail provider signs its reports with, configured unless a test's environment leaves it out.
    static let emailWebhookSecret = WebhookSecret(key: Array(repeating: 7, count: 24))

    static func run(
        environment: [String: String] = ["EMAIL_WEBHOOK_SECRET": emailWebhookSecret.text], _ body: @Sendable (NotificationsRoutes) async throws -> Void
    ) async throws {
        let settings = try NotificationsService.Settings.from(EnvironmentReader(environment))
        let signer = try RouterTesting.signer()
        try await withNotificationsDatabase("notifications") { database, logger in
        let router = RouterTesting.router(signer: signer)
        NotificationsService.addRoutes(
            to: router, stores: .init(database: database, logger: logger), settings: settings, clock: .system, logger: logger)
        try await Application(router: router).test(.router) { client in
            try await body(NotificationsRoutes(client: client, database: database, signer: signer, clock: .system, logger: logger))
        }
        }
    }

    /// A call as the gateway forwards it: signed, on behalf of `caller` (none: a call without one).
    func send(
        _ method: HTTPRequest.Method, _ target: String, as caller: UUID?, body: Data? = nil, headers: HTTPFields = [:]
    ) async throws -> HummingbirdTesting.TestResponse {
        var headers = headers
        let body = body.map { ByteBuffer(bytes: $0) }
        headers.append(contentsOf: RouterTesting.signedHeaders(method, target, caller: caller, body: body, signer: signer))
        if body != nil { headers[.contentType] = "application/json" }
        return try await client.executeRequest(uri: target, method: method, headers: headers, body: body)
    }

    func send(
        _ method: HTTPRequest.Method, _ target: String, as caller: UUID?, json: [String: any Sendable]
    ) async throws -> HummingbirdTesting.TestResponse {
        try await send(method, target, as: caller, body: try JSONSerialization.data(withJSONObject: json))
    }

    /// A notification in the user's inbox, written as the event handlers write it.
    func deliver(_ message: Message, kind: NotificationKind, to userID: UUID, at time: Date) async throws {
        let inbox = Inbox(outbox: Outbox(service: "notifications"), pushPlatforms: [], webhooks: WebhookQueue(clock: clock), clock: clock)
        _ = try await database.transaction(logger: logger) { connection in
            try await inbox.deliver(message, kind: kind, key: UUID().key, to: userID, at: time, connection: connection, logger: logger)
        }
    }

    /// The user joined the group, as the membership events record it.
    func join(_ groupID: UUID, _ userID: UUID) async throws {
        try await database.withConnection { connection in
            try await WebhookStore(connection: connection, logger: logger).setMembership(groupID, userID, member: true)
        }
    }

    func count(_ query: PostgresQuery) async throws -> Int {
        try await database.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
    }
}

/// A fresh database with the notifications schema migrated, its client running, and a test logger named `label`.
func withNotificationsDatabase(_ label: String, _ body: @Sendable (PostgresClient, Logger) async throws -> Void) async throws {
    try await withTestDatabase(services: ["notifications"]) { testDatabase in
        let logger = Logger.test(label)
        let database = testDatabase.configuration(for: "notifications").makeClient(schema: "notifications", logger: logger)
        try await PostgresClient.withRunning(database) { database in
            try await Migrator.migrate([MessagingMigrations.set, NotificationsMigrations.set], schema: "notifications", client: database, logger: logger)
            try await body(database, logger)
        }
    }
}
