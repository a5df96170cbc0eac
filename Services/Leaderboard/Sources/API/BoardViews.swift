import Foundation
import Hummingbird
import LeaderboardDomain
import SurgeContracts

/// What a board is: a challenge's, a competition's (ranked by quantity in `unit`) or a group's.
struct BoardInfo: Codable, Sendable {
    var scope: BoardScope
    var id: UUID
    var name: String
    /// `points`, or the competition's unit (litres, km) when it ranks by quantity.
    var measure: String
}

/// The window shown, and when the board resets.
struct WindowView: Codable, Sendable {
    /// `2026-W48`, `2026-11` or `all-time`.
    var key: String
    var kind: WindowKind
    /// The zone the window's days are in: the group's, or for a challenge the caller's own.
    var timeZone: String
    var startsAt: Date?
    var endsAt: Date?
    /// When the current window gives way to the next; absent for all time and for past windows.
    var nextResetAt: Date?
    /// A past window, whose standings are final (late check-ins inside their grace window may still correct them).
    var closed: Bool
}

struct StandingView: Codable, Sendable {
    /// Competition ranking: ties share a rank ("1, 2, 2, 4").
    var rank: Int
    var userID: UUID
    var displayName: String
    var avatarURL: String?
    var score: Double
    /// Rank 1 with a score above zero.
    var leader: Bool
    var isCaller: Bool
}

/// The caller's place on a board window.
struct MyStandingView: Codable, Sendable, ResponseEncodable {
    /// Absent when the caller is not on this window's board.
    var rank: Int?
    var score: Double
    /// "Top 3 %": ceil(100 × rank ÷ participants).
    var topPercent: Int?
    var participants: Int
}

struct BoardPageView: Codable, Sendable, ResponseEncodable {
    var board: BoardInfo
    var window: WindowView
    var items: [StandingView]
    var nextCursor: String?
    var me: MyStandingView
}

struct BoardSummaryView: Codable, Sendable {
    var board: BoardInfo
    var window: WindowView
    var me: MyStandingView
    var leaders: [StandingView]
}

struct BoardListView: Codable, Sendable, ResponseEncodable {
    var items: [BoardSummaryView]
}

/// A past window and who won it.
struct PastWindowView: Codable, Sendable {
    var window: WindowView
    var participants: Int
    var winners: [StandingView]
}

struct BoardHistoryView: Codable, Sendable, ResponseEncodable {
    var board: BoardInfo
    var items: [PastWindowView]
    var nextCursor: String?
}

/// Where the next page starts: after this user, or at this position if they have left the board since.
struct BoardCursor: Codable, Sendable {
    var position: Int
    var userID: UUID
}

// The answers read most (a page, a rank) write their own JSON: `BoardViewsJSONTests` holds them to `SurgeJSONWriter`'s bytes.

extension BoardInfo: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        json.object { json in
            json.field("id", id)
            json.field("measure", measure)
            json.field("name", name)
            json.field("scope", scope.rawValue)
        }
    }
}

extension WindowView: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        json.object { json in
            json.field("closed", closed)
            json.field("endsAt", endsAt)
            json.field("key", key)
            json.field("kind", kind.rawValue)
            json.field("nextResetAt", nextResetAt)
            json.field("startsAt", startsAt)
            json.field("timeZone", timeZone)
        }
    }
}

extension StandingView: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        try json.object { json in
            json.field("avatarURL", avatarURL)
            json.field("displayName", displayName)
            json.field("isCaller", isCaller)
            json.field("leader", leader)
            json.field("rank", rank)
            try json.field("score", score)
            json.field("userID", userID)
        }
    }
}

extension MyStandingView: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        try json.object { json in
            json.field("participants", participants)
            json.field("rank", rank)
            try json.field("score", score)
            json.field("topPercent", topPercent)
        }
    }
}

extension BoardPageView: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        try json.object { json in
            try json.field("board", board)
            try json.field("items", items)
            try json.field("me", me)
            json.field("nextCursor", nextCursor)
            try json.field("window", window)
        }
    }
}

extension BoardCursor: JSONWritable {
    func write(to json: inout JSONBytes) throws {
        json.object { json in
            json.field("position", position)
            json.field("userID", userID)
        }
    }
}
