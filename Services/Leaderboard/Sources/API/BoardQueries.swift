import Foundation
import Hummingbird
import LeaderboardDomain
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// The reads of the public API: who may see a board, which window is meant, and the standings from memory. Directory
/// facts come through the replica's `DirectoryCache`, so a read of a current board makes no PostgreSQL round trip.
struct BoardQueries: Sendable {
    let client: PostgresClient
    let cache: BoardCache
    let directory: DirectoryCache
    let clock: ServiceClock
    let logger: Logger

    /// A board the caller may see, with the zone its windows are in (the group's, or the caller's own for a challenge);
    /// 404 otherwise (existence is not leaked).
    struct Visible: Sendable {
        var board: Board
        var info: BoardInfo
        var zone: GroupZone
        var members: [UUID]?
    }

    func challenge(_ challengeID: UUID, caller: UUID) async throws -> Visible {
        let visible = try await directory.value(.challenge(challengeID, caller: caller)) {
            try await client.withConnection { connection -> Visible? in
                let facts = try await CatchUp.standard.value {
                    guard let facts = try await DirectoryStore(connection: connection, logger: logger).challenge(challengeID), facts.kind != .chore,
                        try await DirectoryStore(connection: connection, logger: logger).maySee(facts, userID: caller)
                    else { return nil as DirectoryStore.ChallengeFacts? }
                    return facts
                }
                guard let facts else { return nil }
                let zone = try await DirectoryStore(connection: connection, logger: logger).profile(caller)?.timeZone ?? "UTC"
                return Visible(
                    board: facts.board,
                    info: BoardInfo(
                        scope: .challenge, id: challengeID, name: facts.name, measure: facts.kind == .competition ? facts.unit ?? "quantity" : "points"),
                    zone: GroupZone(zone: zone), members: nil)
            }
        }
        guard let visible else { throw Problem.notFound("No such leaderboard.") }
        return visible
    }

    func group(_ groupID: UUID, caller: UUID) async throws -> Visible {
        let visible = try await directory.value(.group(groupID, caller: caller)) {
            try await client.withConnection { connection -> Visible? in
                let member = try await CatchUp.standard.until { try await DirectoryStore(connection: connection, logger: logger).isMember(caller, of: groupID) }
                guard member, let group = try await DirectoryStore(connection: connection, logger: logger).group(groupID) else { return nil }
                return Visible(
                    board: Board(.group, groupID), info: BoardInfo(scope: .group, id: groupID, name: group.name, measure: "points"),
                    zone: group.zone, members: try await DirectoryStore(connection: connection, logger: logger).members(of: groupID))
            }
        }
        guard let visible else { throw Problem.notFound("No such leaderboard.") }
        return visible
    }

    /// The window a `window` query parameter names, in the board's zone, and how it is shown (the board's day found
    /// once for both).
    func window(_ text: String?, for visible: Visible) throws -> (WindowKey, WindowView) {
        let today = text == WindowKind.allTime.rawValue ? nil : visible.zone.date(at: clock.now())
        let key = try windowKey(text, for: visible, today: today)
        return (key, view(of: key, for: visible, today: today))
    }

    /// The window a `window` query parameter names, in the board's zone; 404 for one that has not begun. All time
    /// needs no calendar, so a read of it does no date arithmetic. `today` is the board's day, when already known.
    func windowKey(_ text: String?, for visible: Visible, today: LocalDate? = nil) throws -> WindowKey {
        let today = { today ?? visible.zone.date(at: clock.now()) }
        switch text ?? "week" {
        case "all-time": return .allTime
        case "week": return .week(containing: today())
        case "month": return .month(containing: today())
        case let other:
            guard let key = WindowKey(other), key.kind != .allTime else {
                throw Problem.validation(field: "window", "must be week, month, all-time, or a window key such as 2026-W47 or 2026-11")
            }
            guard key <= WindowKey.containing(today(), kind: key.kind) else { throw Problem.notFound("That window has not begun.") }
            return key
        }
    }

    /// The window's start, end and next reset in the board's zone, and whether it is over.
    private func view(of key: WindowKey, for visible: Visible, today: LocalDate?) -> WindowView {
        guard key.kind != .allTime else {
            return WindowView(
                key: key.description, kind: key.kind, timeZone: visible.zone.zoneName(for: key), startsAt: nil, endsAt: nil, nextResetAt: nil,
                closed: false)
        }
        let current = WindowKey.containing(today ?? visible.zone.date(at: clock.now()), kind: key.kind)
        let bounds = key.bounds(in: visible.zone.calendar(for: key))
        return WindowView(
            key: key.description, kind: key.kind, timeZone: visible.zone.zoneName(for: key), startsAt: bounds?.start, endsAt: bounds?.end,
            nextResetAt: key == current ? bounds?.end : nil, closed: key < current)
    }

    /// The names and avatars of the users on a page.
    func profiles(_ userIDs: [UUID]) async throws -> [UUID: DirectoryStore.Profile] {
        try await directory.values(userIDs, key: DirectoryCache.Key.profile) { missing in
            try await client.withConnection { try await DirectoryStore(connection: $0, logger: logger).profiles(missing) }
        }
    }

    /// A page of the board window: from a cursor, or (around) centred on the caller.
    func page(_ visible: Visible, window: WindowKey, view: WindowView, caller: UUID, limit: Int, after cursor: BoardCursor?, around: Bool) async throws
        -> BoardPageView
    {
        let boardWindow = BoardWindow(board: visible.board, window: window)
        let names = try await memberNames(visible)
        let (entries, ranks, start, me) = try await cache.read(boardWindow) { index in
            for (member, name) in names where index.entry(member) == nil { index.set(member, score: 0, name: name) }
            var start = 0
            if around, let position = index.position(of: caller) {
                start = max(0, position - limit / 2)
            } else if let cursor {
                start = index.position(of: cursor.userID).map { $0 + 1 } ?? cursor.position + 1
            }
            let ranked = index.rankedEntries(from: start, limit: limit + 1)
            return (ranked.map(\.entry), ranked.map(\.rank), start, Self.standing(of: caller, in: index))
        }
        let shown = Array(entries.prefix(limit))
        let items = try await standings(shown, ranks: ranks, caller: caller)
        let next = entries.count > limit ? shown.last.map { Cursor.encode(BoardCursor(position: start + shown.count - 1, userID: $0.userID)) } : nil
        return BoardPageView(board: visible.info, window: view, items: items, nextCursor: next, me: me)
    }

    /// The caller and their friends, ranked among themselves.
    func friends(_ visible: Visible, window: WindowKey, view: WindowView, caller: UUID) async throws -> BoardPageView {
        let friends = try await directory.value(.friends(caller)) {
            try await client.withConnection { try await DirectoryStore(connection: $0, logger: logger).friends(of: caller) }
        }
        let circle = [caller] + friends
        let boardWindow = BoardWindow(board: visible.board, window: window)
        let profiles = try await profiles(circle)
        // The circle as a board of its own: the same order and ranks, counted among them.
        var circleBoard = RankIndex()
        try await cache.read(boardWindow) { index in
            for id in circle where profiles[id] != nil {
                let entry = index.entry(id) ?? RankEntry(userID: id, score: 0, name: profiles[id]?.displayName ?? "")
                circleBoard.set(id, score: entry.score, name: entry.name)
            }
        }
        let ranked = circleBoard.rankedEntries(from: 0, limit: circleBoard.count)
        let items = try await standings(ranked.map(\.entry), ranks: ranked.map(\.rank), caller: caller)
        let me = Self.standing(of: caller, in: circleBoard)
        return BoardPageView(board: visible.info, window: view, items: items, nextCursor: nil, me: me)
    }

    func me(_ visible: Visible, window: WindowKey, caller: UUID) async throws -> MyStandingView {
        let names = try await memberNames(visible)
        return try await cache.read(BoardWindow(board: visible.board, window: window)) { index in
            for (member, name) in names where index.entry(member) == nil { index.set(member, score: 0, name: name) }
            return Self.standing(of: caller, in: index)
        }
    }

    /// Past windows of the board that have scores, newest first, each with its winners.
    func history(_ visible: Visible, kind: WindowKind, caller: UUID, page: PageRequest<String>) async throws -> BoardHistoryView {
        let today = visible.zone.date(at: clock.now())
        let current = WindowKey.containing(today, kind: kind)
        let keys = try await client.withConnection { try await ScoreStore(connection: $0, logger: logger).windows(of: visible.board) }
        // Issued cursors are window keys of the kind asked for; any other string was not issued for this list.
        let before = try page.after.map { cursor in
            guard let key = WindowKey(cursor), key.kind == kind else { throw Problem.unknownCursor() }
            return key
        }
        let past = keys.filter { key in key.kind == kind && key < current && before.map { key < $0 } ?? true }.sorted(by: >)
        var items: [PastWindowView] = []
        for key in past.prefix(page.limit) {
            let bounds = key.bounds(in: visible.zone.calendar(for: key))
            let (winners, count) = try await cache.read(BoardWindow(board: visible.board, window: key)) { ($0.leaders, $0.count) }
            items.append(PastWindowView(
                window: WindowView(
                    key: key.description, kind: key.kind, timeZone: visible.zone.zoneName(for: key), startsAt: bounds?.start, endsAt: bounds?.end,
                    nextResetAt: nil,
                    closed: true),
                participants: count, winners: try await standings(winners, ranks: winners.map { _ in 1 }, caller: caller)))
        }
        let next = past.count > page.limit ? items.last.map { Cursor.encode($0.window.key) } : nil
        return BoardHistoryView(board: visible.info, items: items, nextCursor: next)
    }

    /// Each board the caller can see, with this week's leaders and their own place.
    func list(caller: UUID) async throws -> BoardListView {
        let (challenges, groups) = try await directory.value(.boards(caller)) {
            try await client.withConnection { try await DirectoryStore(connection: $0, logger: logger).boardsOf(caller) }
        }
        var items: [BoardSummaryView] = []
        var visibles: [Visible] = []
        for groupID in groups { visibles.append(try await group(groupID, caller: caller)) }
        for challenge in challenges { visibles.append(try await self.challenge(challenge.challengeID, caller: caller)) }
        for visible in visibles {
            let (key, view) = try window(nil, for: visible)
            let page = try await page(visible, window: key, view: view, caller: caller, limit: 3, after: nil, around: false)
            items.append(BoardSummaryView(board: visible.info, window: view, me: page.me, leaders: page.items.filter(\.leader)))
        }
        return BoardListView(items: items)
    }

    // MARK: Helpers

    /// A group's members (each on the board, at 0 until they score), with their names.
    private func memberNames(_ visible: Visible) async throws -> [(UUID, String)] {
        guard let members = visible.members, !members.isEmpty else { return [] }
        let profiles = try await profiles(members)
        return members.compactMap { id in profiles[id].map { (id, $0.displayName) } }
    }

    private func standings(_ entries: [RankEntry], ranks: [Int], caller: UUID) async throws -> [StandingView] {
        let profiles = try await profiles(entries.map(\.userID))
        return zip(entries, ranks).map { entry, rank in
            StandingView(
                rank: rank, userID: entry.userID, displayName: profiles[entry.userID]?.displayName ?? entry.name,
                avatarURL: profiles[entry.userID]?.avatarURL, score: entry.score, leader: rank == 1 && entry.score > 0, isCaller: entry.userID == caller)
        }
    }

    private static func standing(of caller: UUID, in index: RankIndex) -> MyStandingView {
        let entry = index.entry(caller)
        let rank = entry.map { index.rank(forScore: $0.score) }
        return MyStandingView(
            rank: rank, score: entry?.score ?? 0, topPercent: rank.map { RankIndex.topPercent(rank: $0, of: index.count) }, participants: index.count)
    }
}

/// The caller's part of the data export: their score on every board window.
struct LeaderboardExport: Codable, Sendable, ResponseEncodable {
    struct Score: Codable, Sendable {
        var board: String
        var window: String
        var score: Double
    }

    var scores: [Score]
}

extension BoardQueries {
    func export(userID: UUID) async throws -> LeaderboardExport {
        LeaderboardExport(scores: try await ScoreReader(client: client, logger: logger).scores(of: userID))
    }
}
