import Foundation
import LeaderboardDomain
import SurgeContracts

/// A board: whose standings, measured how. Challenges rank by points; competitions by the total quantity logged in
/// their unit; groups by points earned in anything of the group.
struct Board: Hashable, Sendable {
    enum Kind: String, Sendable {
        case challenge, competition, group
    }

    var kind: Kind
    var subjectID: UUID

    /// `challenge:<id>`, `competition:<id>` or `group:<id>`: the key stored with its scores.
    var key: String { "\(kind.rawValue):\(subjectID.key)" }
    var scope: BoardScope { kind == .group ? .group : .challenge }

    init(_ kind: Kind, _ subjectID: UUID) {
        self.kind = kind
        self.subjectID = subjectID
    }

    init?(key: String) {
        let parts = key.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let kind = Kind(rawValue: String(parts[0])), let id = UUID(text: parts[1]) else { return nil }
        self.init(kind, id)
    }
}

/// One window of one board.
struct BoardWindow: Hashable, Sendable {
    var board: Board
    var window: WindowKey
}

/// One user's score on one board window.
struct ScoreKey: Hashable, Sendable {
    var boardWindow: BoardWindow
    var userID: UUID

    init(_ boardWindow: BoardWindow, _ userID: UUID) {
        self.boardWindow = boardWindow
        self.userID = userID
    }
}
