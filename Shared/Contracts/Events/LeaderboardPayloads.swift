import Foundation

/// Which board: a challenge's or competition's, or a group's (every member, points from anything of the group).
public enum BoardScope: String, Codable, Sendable, JSONSchemaEnum {
    case challenge, group
}

/// A user's rank on a board window changed (only when it actually changed): the mover's old and new rank and whom
/// they overtook (or fell behind), so notifications can tell both sides.
public struct RankChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.leaderboard.rank.changed.v1", topic: .leaderboard,
        summary: "A user's competition rank on one board window changed; lists who they overtook or who overtook them.",
        emitted: """
            When the leaderboard service applies a score change (progress's `points.awarded`, or a quantity in a \
            competition's `checkin.recorded` or `checkin.undone`) that changes the user's rank in a window: one per \
            window whose rank changed, before the `standing.changed` of the same change.
            """)

    public static let example = CloudEvent<RankChanged>.example(id: "e1c5a8f2-9b34-4d70-a6e9-2f0d7b3c8e14", time: "2026-03-14T10:22:32.312Z") {
        RankChanged(
            board: "group:\(Example.flat.key)", scope: .group, subjectID: Example.flat, window: "2026-W11", userID: Example.marco, previousRank: 2,
            rank: 1, score: 140, overtook: [Example.giulia], overtakenBy: [], changedAt: $0)
    }

    public var board: String
    public var scope: BoardScope
    /// The challenge or group.
    public var subjectID: UUID
    /// `2026-W48`, `2026-11` or `all-time`.
    public var window: String
    public var userID: UUID
    /// nil when the user was not on the window's board before.
    public var previousRank: Int?
    public var rank: Int
    public var score: Double
    /// Users the change moved this user past (a rise), at most 20.
    public var overtook: [UUID]
    /// Users who are now ahead of this user because of the change (a fall, e.g. a correction), at most 20.
    public var overtakenBy: [UUID]
    public var changedAt: Date

    public init(
        board: String, scope: BoardScope, subjectID: UUID, window: String, userID: UUID, previousRank: Int?, rank: Int, score: Double,
        overtook: [UUID], overtakenBy: [UUID], changedAt: Date
    ) {
        self.board = board
        self.scope = scope
        self.subjectID = subjectID
        self.window = window
        self.userID = userID
        self.previousRank = previousRank
        self.rank = rank
        self.score = score
        self.overtook = overtook
        self.overtakenBy = overtakenBy
        self.changedAt = changedAt
    }

    public var partitionKey: String { subjectID.key }
    public var subject: String { "boards/\(board)/windows/\(window)/users/\(userID.key)" }
}

/// A user's score on a board changed: every change, also one that moves nobody (unlike `RankChanged`), with the
/// user's new score and rank in each window it counts in. What live boards show as they move.
public struct StandingChanged: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.leaderboard.standing.changed.v1", topic: .leaderboard,
        summary: "A user's score on a board changed (every change, unlike rank.changed): their new score and rank in each window it counts in.",
        emitted: """
            When the leaderboard service applies a score change (progress's `points.awarded`, or a quantity in a \
            competition's `checkin.recorded` or `checkin.undone`): one per board the change counts on (a challenge's \
            or competition's, a group's), after the `rank.changed` it caused.
            """)

    public static let example = CloudEvent<StandingChanged>.example(id: "0a7d3e9b-c6f1-4825-bd40-8e5a2c9f1d73", time: "2026-03-14T10:22:32.312Z") {
        StandingChanged(
            board: "group:\(Example.flat.key)", scope: .group, subjectID: Example.flat, userID: Example.marco,
            windows: [
                .init(window: "2026-W11", rank: 1, score: 140), .init(window: "2026-03", rank: 2, score: 380),
                .init(window: "all-time", rank: 2, score: 1260),
            ],
            changedAt: $0)
    }

    public struct WindowStanding: Codable, Sendable, Equatable {
        /// `2026-W48`, `2026-11` or `all-time`.
        public var window: String
        public var rank: Int
        public var score: Double

        public init(window: String, rank: Int, score: Double) {
            self.window = window
            self.rank = rank
            self.score = score
        }
    }

    public var board: String
    public var scope: BoardScope
    /// The challenge or group.
    public var subjectID: UUID
    public var userID: UUID
    public var windows: [WindowStanding]
    public var changedAt: Date

    public init(board: String, scope: BoardScope, subjectID: UUID, userID: UUID, windows: [WindowStanding], changedAt: Date) {
        self.board = board
        self.scope = scope
        self.subjectID = subjectID
        self.userID = userID
        self.windows = windows
        self.changedAt = changedAt
    }

    public var partitionKey: String { subjectID.key }
    public var subject: String { "boards/\(board)/users/\(userID.key)" }
}

/// One place of a window's final standings.
public struct Standing: Codable, Sendable, Equatable {
    public var userID: UUID
    public var rank: Int
    public var score: Double

    public init(userID: UUID, rank: Int, score: Double) {
        self.userID = userID
        self.rank = rank
        self.score = score
    }
}

/// A board window is over: its final standings (the top 10 and every winner). A check-in still accepted in its
/// day's grace window after the close changes them: the window is published again with the next `revision`.
public struct WindowClosed: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.leaderboard.window.closed.v1", topic: .leaderboard,
        summary: "A weekly or monthly board window ended: final standings and winners (republished with a higher revision if late check-ins change them).",
        emitted: """
            When the leaderboard's window closer (every `WINDOW_CLOSE_INTERVAL_MS`, 1 s by default) finds a week or \
            month over: a group's at the end of its last day in the group's time zone, a challenge's or \
            competition's once that day is over everywhere (UTC-12). Again, with the next `revision`, when a \
            check-in accepted late changes a closed window.
            """)

    public static let example = CloudEvent<WindowClosed>.example(id: "8f4b2d6a-1e93-4c07-a5b8-d9c0e7f3a251", time: "2026-03-15T23:00:00.613Z") {
        WindowClosed(
            board: "group:\(Example.flat.key)", scope: .group, subjectID: Example.flat, window: "2026-W11",
            startsAt: Example.instant("2026-03-08T23:00:00.000Z"), endsAt: Example.instant("2026-03-15T23:00:00.000Z"), revision: 1, participants: 2,
            winners: [Example.marco],
            standings: [Standing(userID: Example.marco, rank: 1, score: 140), Standing(userID: Example.giulia, rank: 2, score: 120)],
            closedAt: $0)
    }

    public var board: String
    public var scope: BoardScope
    public var subjectID: UUID
    public var window: String
    public var startsAt: Date
    public var endsAt: Date
    /// 1 at the close; each correction after it publishes the window again with the next number.
    public var revision: Int
    public var participants: Int
    public var winners: [UUID]
    public var standings: [Standing]
    public var closedAt: Date

    public init(
        board: String, scope: BoardScope, subjectID: UUID, window: String, startsAt: Date, endsAt: Date, revision: Int, participants: Int,
        winners: [UUID], standings: [Standing], closedAt: Date
    ) {
        self.board = board
        self.scope = scope
        self.subjectID = subjectID
        self.window = window
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.revision = revision
        self.participants = participants
        self.winners = winners
        self.standings = standings
        self.closedAt = closedAt
    }

    public var partitionKey: String { subjectID.key }
    public var subject: String { "boards/\(board)/windows/\(window)" }
}
