import ChallengesDomain
import Foundation
import SurgeCalendar
import SurgeRuntime

/// One version of a challenge as a caller is shown it, with the history and the caller's relation to the challenge.
struct ShownChallenge: Sendable, Equatable {
    var challenge: ChallengeRecord
    var version: ChallengeVersion
    var history: [VersionSummary]
}

/// A definition as one caller may see it: the version in force today where they are judged, or a version asked for.
struct ChallengeReading {
    let storage: ChallengeStorage
    let now: @Sendable () -> Date

    func detail(_ challengeID: UUID, caller: UUID) async throws -> ShownChallenge {
        let now = now()
        return try await storage.reading { store in
            let challenge = try await store.visibleChallenge(challengeID, to: caller)
            let history = try await store.history(of: challengeID)
            guard let latest = try await store.version(challenge.latestVersion, of: challengeID) else {
                throw ChallengesError.notFound(.challenge)
            }
            let today = LocalCalendar(timeZone: try await store.judgingZone(of: latest, for: caller)).date(at: now)
            let inForce = VersionSchedule.versionInForce(on: today, among: history) ?? challenge.latestVersion
            let shown = inForce == latest.version ? latest : try await store.version(inForce, of: challengeID) ?? latest
            return ShownChallenge(challenge: challenge, version: shown, history: history)
        }
    }

    func version(_ number: Int, of challengeID: UUID, caller: UUID) async throws -> ShownChallenge {
        try await storage.reading { store in
            let challenge = try await store.visibleChallenge(challengeID, to: caller)
            guard let asked = try await store.version(number, of: challengeID) else {
                throw ChallengesError.notFound(.version(number))
            }
            return ShownChallenge(challenge: challenge, version: asked, history: try await store.history(of: challengeID))
        }
    }
}
