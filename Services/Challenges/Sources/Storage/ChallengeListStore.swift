import ChallengesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// The library and the lists, each one page of what the caller may see, filtered and ordered.
struct ChallengeListStore {
    let client: PostgresClient
    let logger: Logger

    func browse(_ query: BrowseQuery, page: PageRequest<BrowsePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        let sql = try browseQuery(query, after: page.after, limit: page.limit + 1, caller: caller)
        let rows = try await fetch(sql, relevance: query.sort == .relevance)
        return page.page(rows) { BrowsePosition(sort: query.sort, key: $0.sortKey, id: $0.latest.challengeID) }
    }

    /// What the caller owns or was invited to, newest first.
    func mine(kind: ChallengeKind?, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        var sql = SQLBuilder()
        let me = sql.bind(caller)
        sql.append("SELECT \(ChallengeQueries.summaryColumns), c.seq::float8 FROM \(ChallengeQueries.latestVersionJoin)\n")
        sql.append(
            "WHERE (c.owner_id = \(me) OR EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(me)))")
        sql.append("\n  AND \(ChallengeQueries.visibleTo(me))")
        if let kind { sql.append("\n  AND c.kind = \(sql.bind(kind.rawValue))") }
        if let after = page.after { sql.append("\n  AND c.seq < \(sql.bind(after.seq))") }
        sql.append("\nORDER BY c.seq DESC LIMIT \(sql.bind(page.limit + 1))")
        return try await sequencePage(sql.query, page)
    }

    /// A group's chores, newest first.
    func chores(groupID: UUID, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        var sql = SQLBuilder()
        let me = sql.bind(caller)
        sql.append("SELECT \(ChallengeQueries.summaryColumns), c.seq::float8 FROM \(ChallengeQueries.latestVersionJoin)\n")
        sql.append("WHERE c.group_id = \(sql.bind(groupID)) AND c.kind = 'chore' AND \(ChallengeQueries.visibleTo(me))")
        if let after = page.after { sql.append("\n  AND c.seq < \(sql.bind(after.seq))") }
        sql.append("\nORDER BY c.seq DESC LIMIT \(sql.bind(page.limit + 1))")
        return try await sequencePage(sql.query, page)
    }

    /// The library query: visible definitions, filtered, searched, sorted, after the cursor.
    func browseQuery(_ query: BrowseQuery, after position: BrowsePosition?, limit: Int, caller: UUID) throws -> PostgresQuery {
        var sql = SQLBuilder()
        let me = sql.bind(caller)
        var tsQuery: String?
        if let q = query.q { tsQuery = "websearch_to_tsquery('english', \(sql.bind(q)))" }
        let key: String
        switch query.sort {
        case .newest: key = "c.seq::float8"
        case .liked: key = "c.likes_count::float8"
        case .trending: key = "c.trending_score::float8"
        case .relevance: key = "ts_rank(c.search, \(tsQuery ?? "''::tsquery"))::float8"
        }
        sql.append("SELECT \(ChallengeQueries.summaryColumns), \(key) FROM \(ChallengeQueries.latestVersionJoin)\n")
        sql.append("WHERE \(ChallengeQueries.visibleTo(me))")
        if let tsQuery { sql.append("\n  AND c.search @@ \(tsQuery)") }
        if let kind = query.kind { sql.append("\n  AND c.kind = \(sql.bind(kind.rawValue))") }
        if let difficulty = query.difficulty { sql.append("\n  AND c.difficulty = \(sql.bind(difficulty.rawValue))") }
        if let category = query.category { sql.append("\n  AND c.category = \(sql.bind(category))") }
        if let minDays = query.minDays { sql.append("\n  AND c.duration_days >= \(sql.bind(minDays))") }
        if let maxDays = query.maxDays { sql.append("\n  AND c.duration_days <= \(sql.bind(maxDays))") }
        if let position {
            switch query.sort {
            case .newest: sql.append("\n  AND c.seq < \(sql.bind(try Self.integerKey(position)))")
            case .liked:
                sql.append("\n  AND (c.likes_count, c.challenge_id) < (\(sql.bind(try Self.integerKey(position))), \(sql.bind(position.id)))")
            case .trending:
                sql.append("\n  AND (c.trending_score, c.challenge_id) < (\(sql.bind(try Self.integerKey(position))), \(sql.bind(position.id)))")
            case .relevance:
                guard position.key.isFinite else { throw ChallengesError.unknownCursor }
                sql.append("\n  AND (\(key), c.challenge_id) < (\(sql.bind(position.key)), \(sql.bind(position.id)))")
            }
        }
        switch query.sort {
        case .newest: sql.append("\nORDER BY c.seq DESC")
        case .liked: sql.append("\nORDER BY c.likes_count DESC, c.challenge_id DESC")
        case .trending: sql.append("\nORDER BY c.trending_score DESC, c.challenge_id DESC")
        case .relevance: sql.append("\nORDER BY \(key) DESC, c.challenge_id DESC")
        }
        sql.append("\nLIMIT \(sql.bind(limit))")
        return sql.query
    }

    /// The cursor's key as the integer the newest, liked and trending sorts compare. The key comes from the client,
    /// so one that is not an integer (1e300, 2.5) is refused: converting it with `Int(_:)` would trap.
    static func integerKey(_ position: BrowsePosition) throws -> Int {
        guard let key = Int(exactly: position.key) else { throw ChallengesError.unknownCursor }
        return key
    }

    private func sequencePage(_ query: PostgresQuery, _ page: PageRequest<SequencePosition>) async throws -> Page<ListedChallenge> {
        page.page(try await fetch(query, relevance: false)) { SequencePosition(seq: Int($0.sortKey)) }
    }

    /// Rows of `summaryColumns` followed by the sort key.
    private func fetch(_ query: PostgresQuery, relevance: Bool) async throws -> [ListedChallenge] {
        try await client.query(query, logger: logger).collect().map { row in
            let (text, likes, trending, created, key) = try row.decode((String, Int, Int, Date, Double).self)
            return ListedChallenge(
                latest: try StoredJSON.version(text), likes: likes, trendingScore: trending, createdAt: created, sortKey: key,
                relevance: relevance ? key : nil)
        }
    }
}
