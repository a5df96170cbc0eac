import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// Puts the curated content into the database at start-up, in one transaction that replicas take turns at: a
/// definition that is missing is inserted as version 1 (`ChallengePublished`); one whose content version went up gets
/// a new version, in force from the first day that has not begun anywhere (`ChallengeChanged`); anything else is left
/// alone. Starting twice changes nothing the second time.
struct ContentSeeder {
    let storage: ChallengeStorage

    /// `changedBy` of content upgrades: no person, the content file.
    static let contentAuthor = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!

    struct Report: Equatable, Sendable {
        var published: [UUID] = []
        var upgraded: [UUID] = []
    }

    struct InvalidContent: Error, CustomStringConvertible {
        let name: String
        let errors: [FieldError]
        var description: String {
            "curated definition \(name) is invalid: " + errors.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
        }
    }

    /// Seeds `entries` (the curated content) at `now`.
    @discardableResult
    func seed(_ entries: [CuratedEntry] = CuratedContent.entries, now: Date) async throws -> Report {
        for entry in entries {
            let errors = ChallengeDraft(entry.definition).validate(.content)
            guard errors.isEmpty else { throw InvalidContent(name: entry.definition.name, errors: errors) }
        }
        return try await storage.transaction { store in
            try await store.lockContent()
            var report = Report()
            for entry in entries {
                let id = entry.definition.challengeID
                guard let (stored, latest) = try await store.seeded(id) else {
                    var first = entry.definition
                    first.version = 1
                    first.effectiveFrom = nil
                    try await store.insert(first, contentVersion: entry.contentVersion, createdBy: nil, at: now)
                    try await store.publish(ChallengePublished(definition: ChallengeDefinition(first), publishedAt: now), at: now, trace: nil)
                    report.published.append(id)
                    continue
                }
                guard (stored ?? 0) < entry.contentVersion else { continue }
                var next = entry.definition
                next.version = latest + 1
                next.effectiveFrom = VersionSchedule.contentEffectiveFrom(at: now)
                try await store.add(next, contentVersion: entry.contentVersion, createdBy: nil, at: now)
                try await store.publish(
                    ChallengeChanged(definition: ChallengeDefinition(next), changedBy: Self.contentAuthor, changedAt: now), at: now, trace: nil)
                report.upgraded.append(id)
            }
            return report
        }
    }
}
