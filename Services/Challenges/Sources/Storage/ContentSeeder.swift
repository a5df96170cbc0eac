import ChallengesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Puts the curated content into the database at start-up, in one transaction that replicas take turns at: a
/// definition that is missing is inserted as version 1 (`ChallengePublished`); one whose content version went up gets
/// a new version, in force from the first day that has not begun anywhere (`ChallengeChanged`); anything else is left
/// alone. Starting twice changes nothing the second time.
enum ContentSeeder {
    /// `changedBy` of content upgrades: no person, the content file.
    static let contentAuthor = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!

    struct Report: Equatable, Sendable {
        var published: [UUID] = []
        var upgraded: [UUID] = []
    }

    struct InvalidContent: Error, CustomStringConvertible {
        let name: String
        let errors: [Problem.FieldError]
        var description: String {
            "curated definition \(name) is invalid: " + errors.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
        }
    }

    @discardableResult
    static func seed(
        _ entries: [CuratedEntry] = CuratedContent.entries, client: PostgresClient, outbox: Outbox, now: Date, logger: Logger
    ) async throws -> Report {
        for entry in entries {
            let errors = ChallengeDraft(entry.definition).validate(.content)
            guard errors.isEmpty else { throw InvalidContent(name: entry.definition.name, errors: errors) }
        }
        return try await client.transaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext('surge.challenges.content'))", logger: logger)
            var report = Report()
            for entry in entries {
                let id = entry.definition.challengeID
                let rows = try await connection.query(
                    "SELECT content_version, latest_version FROM challenges WHERE challenge_id = \(id)", logger: logger
                ).collect()
                guard let existing = rows.first else {
                    var definition = entry.definition
                    definition.version = 1
                    definition.effectiveFrom = nil
                    try await PostgresChallengeRepository.insert(
                        definition, contentVersion: entry.contentVersion, createdBy: nil, at: now, on: connection, logger: logger)
                    try await outbox.append(ChallengePublished(definition: definition, publishedAt: now), on: connection, at: now, logger: logger)
                    report.published.append(id)
                    continue
                }
                let (stored, latest) = try existing.decode((Int?, Int).self)
                guard (stored ?? 0) < entry.contentVersion else { continue }
                var definition = entry.definition
                definition.version = latest + 1
                definition.effectiveFrom = VersionSchedule.contentEffectiveFrom(at: now)
                try await PostgresChallengeRepository.insertVersion(definition, createdBy: nil, at: now, on: connection, logger: logger)
                try await PostgresChallengeRepository.updateRow(
                    to: definition, contentVersion: entry.contentVersion, at: now, on: connection, logger: logger)
                try await outbox.append(
                    ChallengeChanged(definition: definition, changedBy: contentAuthor, changedAt: now), on: connection, at: now, logger: logger)
                report.upgraded.append(id)
            }
            return report
        }
    }
}
