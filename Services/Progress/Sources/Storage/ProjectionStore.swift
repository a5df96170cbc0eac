import Foundation
import Logging
import PostgresNIO
import ProgressDomain
import SurgeContracts

/// What progress keeps from other services' events: members, definition versions, invitations, groups. Written
/// inside the inbox transaction of the event that taught us.
struct ProjectionStore {
    let connection: PostgresConnection
    let logger: Logger

    func upsertMember(_ userID: UUID, timeZone: String) async throws {
        try await connection.query(
            """
            INSERT INTO members (user_id, time_zone) VALUES (\(userID), \(timeZone))
            ON CONFLICT (user_id) DO UPDATE SET time_zone = EXCLUDED.time_zone, updated_at = now()
            """, logger: logger)
    }

    func setDailyGoal(_ userID: UUID, _ goal: Int) async throws {
        try await connection.query(
            """
            INSERT INTO members (user_id, time_zone, daily_goal) VALUES (\(userID), 'UTC', \(goal))
            ON CONFLICT (user_id) DO UPDATE SET daily_goal = EXCLUDED.daily_goal, updated_at = now()
            """, logger: logger)
    }

    func member(_ userID: UUID) async throws -> Member? {
        let rows = try await connection.query("SELECT time_zone, daily_goal FROM members WHERE user_id = \(userID)", logger: logger)
        for try await (timeZone, dailyGoal) in rows.decode((String, Int?).self) {
            return Member(userID: userID, timeZone: timeZone, dailyGoal: dailyGoal)
        }
        return nil
    }

    /// Keeps the definition as published.
    func saveDefinition(_ definition: ChallengeDefinition) async throws {
        let json = String(decoding: try SurgeJSON.encode(definition), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO definitions (challenge_id, version, effective_from, kind, owner_id, group_id, definition)
            VALUES (\(definition.challengeID), \(definition.version), \(definition.effectiveFrom), \(definition.kind.rawValue),
                    \(definition.ownerID), \(definition.groupID), \(json)::jsonb)
            ON CONFLICT (challenge_id, version) DO UPDATE SET definition = EXCLUDED.definition, effective_from = EXCLUDED.effective_from
            """, logger: logger)
    }

    func markDeleted(_ challengeID: UUID, at instant: Date) async throws {
        try await connection.query(
            "INSERT INTO deleted_definitions (challenge_id, deleted_at) VALUES (\(challengeID), \(instant)) ON CONFLICT DO NOTHING",
            logger: logger)
    }

    /// Every version of a live definition, as progress judges by it; nil when unknown or deleted.
    func timeline(_ challengeID: UUID) async throws -> DefinitionTimeline? {
        let rows = try await connection.query(
            """
            SELECT definition::text FROM definitions
            WHERE challenge_id = \(challengeID) AND NOT EXISTS (SELECT 1 FROM deleted_definitions d WHERE d.challenge_id = \(challengeID))
            """, logger: logger)
        var versions: [JudgingDefinition] = []
        for try await text in rows.decode(String.self) {
            versions.append(JudgingDefinition(try SurgeJSON.decode(ChallengeDefinition.self, from: Data(text.utf8))))
        }
        return DefinitionTimeline(versions)
    }

    func invite(_ userID: UUID, to challengeID: UUID) async throws {
        try await connection.query(
            "INSERT INTO invitations (challenge_id, user_id) VALUES (\(challengeID), \(userID)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func isInvited(_ userID: UUID, to challengeID: UUID) async throws -> Bool {
        try await !connection.query(
            "SELECT 1 FROM invitations WHERE challenge_id = \(challengeID) AND user_id = \(userID)", logger: logger
        ).collect().isEmpty
    }

    func upsertGroup(_ groupID: UUID, name: String, timeZone: String) async throws {
        try await connection.query(
            """
            INSERT INTO groups (group_id, name, time_zone) VALUES (\(groupID), \(name), \(timeZone))
            ON CONFLICT (group_id) DO UPDATE SET name = EXCLUDED.name, time_zone = EXCLUDED.time_zone
            """, logger: logger)
    }

    func groupTimeZone(_ groupID: UUID) async throws -> String? {
        try await connection.query("SELECT time_zone FROM groups WHERE group_id = \(groupID)", logger: logger)
            .collect().first?.decode(String.self)
    }

    func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        if member {
            try await connection.query(
                "INSERT INTO group_members (group_id, user_id) VALUES (\(groupID), \(userID)) ON CONFLICT DO NOTHING", logger: logger)
        } else {
            try await connection.query("DELETE FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger)
        }
    }

    func isMember(_ userID: UUID, of groupID: UUID) async throws -> Bool {
        try await !connection.query(
            "SELECT 1 FROM group_members WHERE group_id = \(groupID) AND user_id = \(userID)", logger: logger
        ).collect().isEmpty
    }
}

extension JudgingDefinition {
    /// What progress keeps of a published definition to judge by.
    init(_ published: ChallengeDefinition) {
        self.init(
            challengeID: published.challengeID, version: published.version, effectiveFrom: published.effectiveFrom, kind: published.kind,
            name: published.name, visibility: published.visibility, ownerID: published.ownerID, groupID: published.groupID,
            durationDays: published.durationDays, tasks: published.tasks, rules: published.rules, chore: published.chore,
            competition: published.competition)
    }
}
