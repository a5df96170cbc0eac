import Foundation
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeContracts

/// What handling an event reads and changes: the directory (profiles, groups, members, friends, challenges,
/// participants) and the scores of board windows. `PostgresLeaderboardStore` is the incremental path, one event's
/// inbox transaction; `MemoryLeaderboardStore` is the rebuild, every event in memory and written once at the end.
/// The handlers (`LeaderboardEvents`) are written once over this, so both paths end with the same boards.
protocol LeaderboardStore {
    func profile(_ userID: UUID) async throws -> DirectoryStore.Profile?
    func groupZone(_ groupID: UUID) async throws -> GroupZone?

    mutating func saveProfile(_ profile: DirectoryStore.Profile) async throws
    /// A new display name moves the user within ties: their rows are read again by replicas.
    mutating func touchScores(of userID: UUID) async throws
    /// A deleted user leaves the directory and every board window, current and past.
    mutating func erase(_ userID: UUID) async throws
    mutating func saveGroup(_ groupID: UUID, name: String, timeZone: String, at instant: Date) async throws
    mutating func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws
    mutating func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws
    mutating func saveChallenge(_ definition: ChallengeDefinition) async throws
    mutating func deleteChallenge(_ challengeID: UUID) async throws
    mutating func invite(_ userID: UUID, to challengeID: UUID) async throws
    mutating func addParticipant(_ userID: UUID, to challengeID: UUID) async throws
    /// Adds `delta` to the user's score on each window of the board; nothing for a deleted user, whose late points
    /// must not put them back on a board (checked in the write's own statement, not asked first).
    mutating func addScore(_ delta: Double, for userID: UUID, on board: Board, windows: [WindowKey], at time: Date, trace: TraceContext?)
        async throws
    mutating func removeScores(of userID: UUID, from board: Board, windows: [WindowKey]) async throws
}

/// The incremental path: one event's effects inside its inbox transaction; score changes go through `Scoring`, which
/// gathers them for the transaction's end and publishes who overtook whom.
struct PostgresLeaderboardStore: LeaderboardStore {
    let connection: PostgresConnection
    let logger: Logger
    let scoring: Scoring

    var directory: DirectoryStore { DirectoryStore(connection: connection, logger: logger) }
    var scores: ScoreStore { ScoreStore(connection: connection, logger: logger) }

    func profile(_ userID: UUID) async throws -> DirectoryStore.Profile? { try await directory.profile(userID) }
    func groupZone(_ groupID: UUID) async throws -> GroupZone? { try await directory.groupZone(groupID) }

    func saveProfile(_ profile: DirectoryStore.Profile) async throws { try await directory.saveProfile(profile) }
    // What changes scores other than adding to them comes after the batch's additions so far (`Scoring.flush`).
    func touchScores(of userID: UUID) async throws {
        try await scoring.flush(connection: connection, logger: logger)
        try await scores.touch(userID)
    }

    func erase(_ userID: UUID) async throws {
        try await scoring.flush(connection: connection, logger: logger)
        try await directory.erase(userID)
        try await scores.erase(userID)
    }

    func saveGroup(_ groupID: UUID, name: String, timeZone: String, at instant: Date) async throws {
        try await directory.saveGroup(groupID, name: name, timeZone: timeZone, at: instant)
    }

    func setMembership(_ groupID: UUID, _ userID: UUID, member: Bool) async throws {
        try await directory.setMembership(groupID, userID, member: member)
    }

    func setFriendship(_ a: UUID, _ b: UUID, friends: Bool) async throws {
        try await directory.setFriendship(a, b, friends: friends)
    }

    func saveChallenge(_ definition: ChallengeDefinition) async throws { try await directory.saveChallenge(definition) }
    func deleteChallenge(_ challengeID: UUID) async throws { try await directory.deleteChallenge(challengeID) }
    func invite(_ userID: UUID, to challengeID: UUID) async throws { try await directory.invite(userID, to: challengeID) }

    func addParticipant(_ userID: UUID, to challengeID: UUID) async throws {
        try await directory.addParticipant(userID, to: challengeID)
    }

    func addScore(_ delta: Double, for userID: UUID, on board: Board, windows: [WindowKey], at time: Date, trace: TraceContext?) async throws {
        try await scoring.apply(delta, userID: userID, board: board, windows: windows, at: time, trace: trace, connection: connection, logger: logger)
    }

    func removeScores(of userID: UUID, from board: Board, windows: [WindowKey]) async throws {
        try await scoring.flush(connection: connection, logger: logger)
        try await scores.remove(userID, from: board, windows: windows)
    }
}
