import Foundation
import IdentityDomain
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Gathers everything identity keeps about one user, read in one repeatable-read transaction so the parts agree.
struct ExportStore: Sendable {
    let client: PostgresClient
    let logger: Logger
    let clock: ServiceClock

    func export(_ userID: UUID) async throws -> IdentityExport? {
        let now = clock.now()
        return try await client.transaction(logger: logger) { connection in
            try await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            guard let account = try await AccountRows.account(userID, on: connection, logger: logger) else { return nil }

            let password = try await connection.run(
                "SELECT created_at, updated_at FROM password_credentials WHERE user_id = \(userID)", logger: logger
            ).collect().first.map { row in
                let (created, updated) = try row.decode((Date, Date).self)
                return IdentityExport.PasswordCredential(createdAt: created, updatedAt: updated)
            }
            let social = try await connection.run(
                "SELECT provider, subject, email, linked_at FROM social_identities WHERE user_id = \(userID) ORDER BY linked_at", logger: logger
            ).collect().map { row in
                let (provider, subject, email, linkedAt) = try row.decode((String, String, String?, Date).self)
                return IdentityExport.LinkedIdentity(provider: provider, subject: subject, email: email, linkedAt: linkedAt)
            }

            let (preferences, preferencesUpdatedAt) = try await AccountStore.preferences(userID, on: connection, logger: logger)
            let plan = try await AccountStore.trainingPlan(userID, on: connection, logger: logger).map { plan, updatedAt in
                IdentityExport.TrainingPlanRecord(
                    activityLevel: plan.answers.activityLevel, maxPushUpsInOneSet: plan.answers.maxPushUpsInOneSet,
                    daysPerWeek: plan.answers.daysPerWeek, dailyGoal: plan.dailyGoal, startingSeries: plan.startingSeries,
                    recoverySeconds: plan.recoverySeconds, updatedAt: updatedAt)
            }

            let friends = try await connection.run(
                """
                SELECT u.id, u.display_name, u.avatar_url, f.since FROM friendships f JOIN users u ON u.id = f.friend_id
                WHERE f.user_id = \(userID) ORDER BY f.since, u.id
                """, logger: logger
            ).collect().map { row in
                let (id, name, avatar, since) = try row.decode((UUID, String, String?, Date).self)
                return Friend(user: PublicProfile(id: id, displayName: name, avatarURL: avatar), since: since)
            }
            let requests = try await connection.run(
                """
                SELECT r.id, r.created_at, q.id, q.display_name, q.avatar_url, a.id, a.display_name, a.avatar_url
                FROM friend_requests r JOIN users q ON q.id = r.requester_id JOIN users a ON a.id = r.addressee_id
                WHERE r.requester_id = \(userID) OR r.addressee_id = \(userID) ORDER BY r.seq
                """, logger: logger
            ).collect().map { row in
                let (id, createdAt, requesterID, requesterName, requesterAvatar, addresseeID, addresseeName, addresseeAvatar) = try row.decode(
                    (UUID, Date, UUID, String, String?, UUID, String, String?).self)
                return FriendRequest(
                    id: id, requester: PublicProfile(id: requesterID, displayName: requesterName, avatarURL: requesterAvatar),
                    addressee: PublicProfile(id: addresseeID, displayName: addresseeName, avatarURL: addresseeAvatar), createdAt: createdAt)
            }

            let groups = try await connection.run(
                """
                SELECT \(unescaped: GroupStore.summaryColumns), m.seq, m.joined_at
                FROM group_members m JOIN groups g ON g.id = m.group_id
                WHERE m.user_id = \(userID) ORDER BY m.seq
                """, logger: logger
            ).collect().map { row in
                let (id, name, kind, timeZone, ownerID, role, count, createdAt, _, joinedAt) = try row.decode(
                    (UUID, String, String, String, UUID, String, Int, Date, Int64, Date).self)
                let summary = GroupSummary(
                    id: id, name: name, kind: GroupKind(rawValue: kind) ?? .friends, timeZone: timeZone, ownerID: ownerID,
                    myRole: GroupRole(rawValue: role) ?? .member, memberCount: count, createdAt: createdAt)
                return IdentityExport.Membership(group: summary, joinedAt: joinedAt)
            }

            // A session is a refresh-token family with a current (unused, unrevoked, unexpired) token.
            let sessions = try await connection.run(
                """
                SELECT family_id, min(issued_at), max(issued_at), max(expires_at) FROM refresh_tokens
                WHERE user_id = \(userID) AND revoked_at IS NULL
                GROUP BY family_id
                HAVING bool_or(used_at IS NULL AND expires_at > \(now))
                ORDER BY min(issued_at)
                """, logger: logger
            ).collect().map { row in
                let (family, started, last, expires) = try row.decode((UUID, Date, Date, Date).self)
                return IdentityExport.Session(id: family, startedAt: started, lastRefreshedAt: last, expiresAt: expires)
            }

            return IdentityExport(
                service: "identity", exportedAt: now, account: account,
                credentials: .init(password: password, socialIdentities: social),
                preferences: .init(
                    notificationsEnabled: preferences.notificationsEnabled, dailyReminderTime: preferences.dailyReminderTime,
                    quietHours: preferences.quietHours, disabledCategories: preferences.disabledCategories, telemetryOptOut: preferences.telemetryOptOut,
                    updatedAt: preferencesUpdatedAt),
                trainingPlan: plan, friends: friends,
                friendRequests: .init(
                    incoming: requests.filter { $0.addressee.id == userID }, outgoing: requests.filter { $0.requester.id == userID }),
                groups: groups, sessions: sessions)
        }
    }
}
