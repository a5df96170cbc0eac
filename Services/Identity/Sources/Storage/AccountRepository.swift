import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres

public protocol AccountRepository: Sendable {
    func registerGuest(_ registration: GuestRegistration, trace: TraceContext) async throws -> Account
    func account(_ id: UUID) async throws -> Account?
}

struct PostgresAccountRepository: AccountRepository {
    let client: PostgresClient
    let outbox: Outbox
    let logger: Logger

    func registerGuest(_ registration: GuestRegistration, trace: TraceContext) async throws -> Account {
        let account = Account(
            id: UUID(), displayName: registration.displayName, timeZone: registration.timeZone, locale: registration.locale,
            kind: .guest, createdAt: Date())
        try await client.transaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO users (id, display_name, time_zone, locale, kind, created_at)
                VALUES (\(account.id), \(account.displayName), \(account.timeZone), \(account.locale), \(account.kind.rawValue), \(account.createdAt))
                """, logger: logger)
            try await outbox.append(
                UserRegistered(
                    userID: account.id, displayName: account.displayName, timeZone: account.timeZone,
                    locale: account.locale, kind: account.kind, registeredAt: account.createdAt),
                on: connection, at: account.createdAt, trace: trace, logger: logger)
        }
        return account
    }

    func account(_ id: UUID) async throws -> Account? {
        let rows = try await client.query(
            "SELECT id, display_name, time_zone, locale, kind, created_at FROM users WHERE id = \(id)", logger: logger)
        for try await (id, displayName, timeZone, locale, kind, createdAt) in rows.decode((UUID, String, String, String?, String, Date).self) {
            return Account(id: id, displayName: displayName, timeZone: timeZone, locale: locale, kind: AccountKind(rawValue: kind) ?? .guest, createdAt: createdAt)
        }
        return nil
    }
}
