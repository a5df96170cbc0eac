import ChallengesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime

/// Definitions, their versions, invitations and likes. Every read and write is scoped to what the caller may see
/// (`AccessPolicy`); whatever they may not see does not exist for them (404).
public protocol ChallengeRepository: Sendable {
    func create(_ draft: ChallengeDraft, caller: UUID, trace: TraceContext) async throws -> ChallengeDetail
    func detail(_ challengeID: UUID, caller: UUID) async throws -> ChallengeDetail
    func version(_ challengeID: UUID, version: Int, caller: UUID) async throws -> ChallengeDetail
    func update(_ challengeID: UUID, patch: ChallengePatch, caller: UUID, trace: TraceContext) async throws -> ChallengeDetail
    func delete(_ challengeID: UUID, confirmed: Bool, caller: UUID, trace: TraceContext) async throws
    func invite(_ challengeID: UUID, _ request: InvitationRequest, caller: UUID, trace: TraceContext) async throws -> InvitationResult
    func setLike(_ challengeID: UUID, liked: Bool, caller: UUID, trace: TraceContext) async throws -> LikeState
    func browse(_ query: BrowseQuery, page: PageRequest<BrowsePosition>, caller: UUID) async throws -> Page<ChallengeSummary>
    func mine(kind: ChallengeKind?, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ChallengeSummary>
    func chores(groupID: UUID, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ChallengeSummary>
}

extension Problem {
    static func confirmationRequired() -> Problem {
        Problem(
            slug: "confirmation-required", title: "Confirmation required", status: .unprocessableContent,
            detail: "Deleting removes the definition and its whole history for good. Repeat the request with ?confirm=true.")
    }

    static func notInvitable(_ kind: ChallengeKind) -> Problem {
        Problem(
            slug: "not-invitable", title: "Not invitable", status: .conflict,
            detail: "Invitations are for competitions and curated challenges; a \(kind.rawValue) is not shared by invitation.")
    }
}

struct PostgresChallengeRepository: ChallengeRepository {
    let client: PostgresClient
    let outbox: Outbox
    let clock: ServiceClock
    let logger: Logger

    /// The challenge row and the caller's relation to it.
    struct Row {
        var challengeID: UUID
        var kind: ChallengeKind
        var visibility: Visibility
        var ownerID: UUID?
        var groupID: UUID?
        var latestVersion: Int
        var name: String
        var likes: Int
        var createdAt: Date
        var updatedAt: Date
        var isOwner: Bool
        var isInvited: Bool
        var isGroupMember: Bool
        var likedByMe: Bool

        var facts: AccessFacts {
            AccessFacts(kind: kind, visibility: visibility, isOwner: isOwner, isInvited: isInvited, isGroupMember: isGroupMember)
        }
    }

    // MARK: Reading one

    func row(_ challengeID: UUID, caller: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> Row? {
        let lock = forUpdate ? "FOR UPDATE OF c" : ""
        let rows = try await connection.query(
            """
            SELECT c.challenge_id, c.kind, c.visibility, c.owner_id, c.group_id, c.latest_version, c.name, c.likes_count,
                   c.created_at, c.updated_at,
                   EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(caller)),
                   (c.group_id IS NOT NULL AND EXISTS (SELECT 1 FROM group_members m WHERE m.group_id = c.group_id AND m.user_id = \(caller))),
                   EXISTS (SELECT 1 FROM likes l WHERE l.challenge_id = c.challenge_id AND l.user_id = \(caller))
            FROM challenges c WHERE c.challenge_id = \(challengeID) \(unescaped: lock)
            """, logger: logger)
        let decoded = try await rows.collect().map {
            try $0.decode((UUID, String, String, UUID?, UUID?, Int, String, Int, Date, Date, Bool, Bool, Bool).self)
        }
        for (id, kind, visibility, owner, group, latest, name, likes, created, updated, invited, member, liked) in decoded {
            guard let kind = ChallengeKind(rawValue: kind), let visibility = Visibility(rawValue: visibility) else { return nil }
            return Row(
                challengeID: id, kind: kind, visibility: visibility, ownerID: owner, groupID: group, latestVersion: latest, name: name,
                likes: likes, createdAt: created, updatedAt: updated, isOwner: owner == caller, isInvited: invited,
                isGroupMember: member, likedByMe: liked)
        }
        return nil
    }

    /// The row if the caller may see it; otherwise 404.
    func visibleRow(_ challengeID: UUID, caller: UUID, forUpdate: Bool = false, on connection: PostgresConnection) async throws -> Row {
        guard let row = try await row(challengeID, caller: caller, forUpdate: forUpdate, on: connection), AccessPolicy.canSee(row.facts) else {
            throw Problem.notFound("No such challenge.")
        }
        return row
    }

    func definition(_ challengeID: UUID, version: Int, on connection: PostgresConnection) async throws -> ChallengeDefinition? {
        let rows = try await connection.query(
            "SELECT definition::text FROM challenge_versions WHERE challenge_id = \(challengeID) AND version = \(version)", logger: logger)
        for text in try await rows.collect().map({ try $0.decode(String.self) }) { return try StoredJSON.definition(text) }
        return nil
    }

    func versions(_ challengeID: UUID, on connection: PostgresConnection) async throws -> [VersionSummary] {
        let rows = try await connection.query(
            "SELECT version, effective_from::text, created_at FROM challenge_versions WHERE challenge_id = \(challengeID) ORDER BY version",
            logger: logger)
        var versions: [VersionSummary] = []
        for (version, effective, created) in try await rows.collect().map({ try $0.decode((Int, String?, Date).self) }) {
            versions.append(VersionSummary(version: version, effectiveFrom: effective.flatMap(LocalDate.init), createdAt: created))
        }
        return versions
    }

    /// The zone whose days a definition is judged in for the caller: their own for curated challenges and
    /// competitions (each participant is judged in their own zone), the group's for other group definitions, the
    /// owner's otherwise. UTC when unknown.
    func judgingZone(_ definition: ChallengeDefinition, caller: UUID, on connection: PostgresConnection) async throws -> TimeZone {
        if definition.isJudgedInParticipantsZones {
            return try await DirectoryStore.userTimeZone(caller, on: connection, logger: logger) ?? Trending.utcZone
        }
        if let zone = try await DirectoryStore.groupTimeZone(definition.groupID, on: connection, logger: logger) { return zone }
        return try await DirectoryStore.userTimeZone(definition.ownerID, on: connection, logger: logger) ?? Trending.utcZone
    }

    func detail(of row: Row, showing definition: ChallengeDefinition, versions: [VersionSummary]) -> ChallengeDetail {
        ChallengeDetail(
            definition: definition, latestVersion: row.latestVersion, versions: versions, likes: row.likes, likedByMe: row.likedByMe,
            invited: row.isInvited, canEdit: AccessPolicy.canEdit(row.facts), createdAt: row.createdAt, updatedAt: row.updatedAt)
    }

    func detail(_ challengeID: UUID, caller: UUID) async throws -> ChallengeDetail {
        let now = clock.now()
        return try await client.withConnection { connection in
            let row = try await visibleRow(challengeID, caller: caller, on: connection)
            let history = try await versions(challengeID, on: connection)
            guard let latest = try await definition(challengeID, version: row.latestVersion, on: connection) else {
                throw Problem.notFound("No such challenge.")
            }
            let today = LocalCalendar(timeZone: try await judgingZone(latest, caller: caller, on: connection)).date(at: now)
            let inForce = VersionSchedule.versionInForce(on: today, among: history) ?? row.latestVersion
            let shown = inForce == latest.version ? latest : try await definition(challengeID, version: inForce, on: connection) ?? latest
            return detail(of: row, showing: shown, versions: history)
        }
    }

    func version(_ challengeID: UUID, version: Int, caller: UUID) async throws -> ChallengeDetail {
        try await client.withConnection { connection in
            let row = try await visibleRow(challengeID, caller: caller, on: connection)
            guard let asked = try await definition(challengeID, version: version, on: connection) else {
                throw Problem.notFound("This challenge has no version \(version).")
            }
            return detail(of: row, showing: asked, versions: try await versions(challengeID, on: connection))
        }
    }

    // MARK: Writing

    static func insert(
        _ definition: ChallengeDefinition, contentVersion: Int?, createdBy: UUID?, at now: Date, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO challenges (challenge_id, kind, visibility, owner_id, group_id, latest_version, name, description, category,
                                    difficulty, duration_days, content_version, created_at, updated_at)
            VALUES (\(definition.challengeID), \(definition.kind.rawValue), \(definition.visibility.rawValue), \(definition.ownerID),
                    \(definition.groupID), \(definition.version), \(definition.name), \(definition.description), \(definition.category),
                    \(definition.difficulty.rawValue), \(definition.durationDays), \(contentVersion), \(now), \(now))
            """, logger: logger)
        try await insertVersion(definition, createdBy: createdBy, at: now, on: connection, logger: logger)
    }

    static func insertVersion(
        _ definition: ChallengeDefinition, createdBy: UUID?, at now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let json = try StoredJSON.encode(definition)
        try await connection.query(
            """
            INSERT INTO challenge_versions (challenge_id, version, effective_from, definition, created_at, created_by)
            VALUES (\(definition.challengeID), \(definition.version), \(definition.effectiveFrom?.description)::date, \(json)::jsonb,
                    \(now), \(createdBy))
            """, logger: logger)
    }

    /// Points the row at a new latest version and refreshes what browsing reads from it.
    static func updateRow(
        to definition: ChallengeDefinition, contentVersion: Int?, at now: Date, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            UPDATE challenges SET latest_version = \(definition.version), visibility = \(definition.visibility.rawValue),
                group_id = \(definition.groupID), name = \(definition.name), description = \(definition.description),
                category = \(definition.category), difficulty = \(definition.difficulty.rawValue),
                duration_days = \(definition.durationDays), content_version = COALESCE(\(contentVersion), content_version),
                updated_at = \(now)
            WHERE challenge_id = \(definition.challengeID)
            """, logger: logger)
    }

    func create(_ draft: ChallengeDraft, caller: UUID, trace: TraceContext) async throws -> ChallengeDetail {
        let now = clock.now()
        let logger = self.logger
        return try await client.transaction(logger: logger) { connection in
            let members = try await Self.members(of: draft.groupID, awaiting: caller, on: connection, logger: logger)
            try Self.requireMembership(draft.groupID, members: members, caller: caller)
            let context = DraftContext(source: .user(caller), groupMembers: members, today: VersionSchedule.latestDate(at: now))
            let definition = try ChallengesProblems.mapping {
                try draft.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: caller, context: context)
            }
            try await Self.insert(definition, contentVersion: nil, createdBy: caller, at: now, on: connection, logger: logger)
            try await outbox.append(
                ChallengePublished(definition: definition, publishedAt: now), on: connection, at: now, trace: trace, logger: logger)
            let row = try await visibleRow(definition.challengeID, caller: caller, on: connection)
            return detail(of: row, showing: definition, versions: [VersionSummary(version: 1, effectiveFrom: nil, createdAt: now)])
        }
    }

    func update(_ challengeID: UUID, patch: ChallengePatch, caller: UUID, trace: TraceContext) async throws -> ChallengeDetail {
        let now = clock.now()
        let logger = self.logger
        return try await client.transaction(logger: logger) { connection in
            let row = try await visibleRow(challengeID, caller: caller, forUpdate: true, on: connection)
            guard AccessPolicy.canEdit(row.facts) else {
                throw Problem.forbidden(
                    row.kind == .chore ? "Only members of the household may edit its chores." : "Only the owner may edit this challenge.")
            }
            guard !patch.isEmpty else { throw Problem.validation(field: "body", "must change at least one field") }
            guard let latest = try await definition(challengeID, version: row.latestVersion, on: connection) else {
                throw Problem.notFound("No such challenge.")
            }
            let draft = patch.applied(to: ChallengeDraft(latest))
            let members =
                patch.changesMembership
                ? try await Self.members(of: draft.groupID, awaiting: caller, on: connection, logger: logger)
                : try await DirectoryStore.members(of: draft.groupID, on: connection, logger: logger)
            if patch.changesMembership { try Self.requireMembership(draft.groupID, members: members, caller: caller) }
            let context = DraftContext(
                source: .user(caller), groupMembers: members, checksMembership: patch.changesMembership, today: VersionSchedule.latestDate(at: now))
            var next = try ChallengesProblems.mapping {
                try draft.build(challengeID: challengeID, version: latest.version + 1, effectiveFrom: nil, ownerID: latest.ownerID, context: context)
            }
            if next.hasSameContent(as: latest) {
                return detail(of: row, showing: latest, versions: try await versions(challengeID, on: connection))
            }
            next.effectiveFrom =
                next.isJudgedInParticipantsZones
                ? VersionSchedule.contentEffectiveFrom(at: now)
                : VersionSchedule.effectiveFrom(editedAt: now, in: try await judgingZone(next, caller: caller, on: connection))
            try await Self.insertVersion(next, createdBy: caller, at: now, on: connection, logger: logger)
            try await Self.updateRow(to: next, contentVersion: nil, at: now, on: connection, logger: logger)
            try await outbox.append(
                ChallengeChanged(definition: next, changedBy: caller, changedAt: now), on: connection, at: now, trace: trace, logger: logger)
            var updated = row
            updated.latestVersion = next.version
            updated.updatedAt = now
            return detail(of: updated, showing: next, versions: try await versions(challengeID, on: connection))
        }
    }

    func delete(_ challengeID: UUID, confirmed: Bool, caller: UUID, trace: TraceContext) async throws {
        let now = clock.now()
        let logger = self.logger
        try await client.transaction(logger: logger) { connection in
            let row = try await visibleRow(challengeID, caller: caller, forUpdate: true, on: connection)
            guard AccessPolicy.canDelete(row.facts) else {
                throw Problem.forbidden(
                    row.kind == .curated || row.visibility == .curated
                        ? "Curated challenges are part of the library and cannot be deleted."
                        : row.kind == .chore ? "Only members of the household may delete its chores." : "Only the owner may delete this challenge.")
            }
            guard confirmed else { throw Problem.confirmationRequired() }
            try await connection.query("DELETE FROM challenges WHERE challenge_id = \(challengeID)", logger: logger)
            try await outbox.append(
                ChallengeDeleted(
                    challengeID: challengeID, kind: row.kind, ownerID: row.ownerID, groupID: row.groupID, deletedBy: caller, deletedAt: now),
                on: connection, at: now, trace: trace, logger: logger)
        }
    }

    /// A group's members as identity's events have described them. A caller not among them yet (a household
    /// created or joined a moment ago) is waited for; after the wait, the members as they are.
    /// A group named in a request must be one the caller belongs to: any other is 404, as the group itself is to
    /// them (its existence is not leaked).
    static func requireMembership(_ groupID: UUID?, members: Set<UUID>?, caller: UUID) throws {
        guard let groupID, !(members?.contains(caller) ?? false) else { return }
        throw Problem.notFound("No group \(groupID.key) among yours.")
    }

    static func members(of groupID: UUID?, awaiting caller: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Set<UUID>? {
        guard let groupID else { return nil }
        let withCaller = try await CatchUp.standard.value {
            let members = try await DirectoryStore.members(of: groupID, on: connection, logger: logger)
            return members?.contains(caller) == true ? members : nil
        }
        if let withCaller { return withCaller }
        return try await DirectoryStore.members(of: groupID, on: connection, logger: logger)
    }

    // MARK: Invitations

    func invite(_ challengeID: UUID, _ request: InvitationRequest, caller: UUID, trace: TraceContext) async throws -> InvitationResult {
        // Neither userIDs nor groupID names nobody: nothing is sent, as for a group with no other members.
        let userIDs = request.userIDs ?? []
        if userIDs.count > InvitationRequest.maxUsers {
            throw Problem.validation(field: "userIDs", "must list at most \(InvitationRequest.maxUsers) users")
        }
        let now = clock.now()
        let logger = self.logger
        return try await client.transaction(logger: logger) { connection in
            let row = try await visibleRow(challengeID, caller: caller, forUpdate: true, on: connection)
            guard AccessPolicy.isInvitable(row.kind) else { throw Problem.notInvitable(row.kind) }
            guard AccessPolicy.canInvite(row.facts) else { throw Problem.forbidden("Only the owner may invite people to this challenge.") }
            let others = Set(userIDs).subtracting([caller])
            // Friends accepted a moment ago are waited for.
            _ = try await CatchUp.standard.until {
                try await DirectoryStore.friends(of: caller, among: userIDs, on: connection, logger: logger).isSuperset(of: others)
            }
            let friends = try await DirectoryStore.friends(of: caller, among: userIDs, on: connection, logger: logger)
            var errors: [Problem.FieldError] = []
            for (index, userID) in userIDs.enumerated() {
                if userID == caller {
                    errors.append(.init(field: "userIDs[\(index)]", message: "is you"))
                } else if !friends.contains(userID) {
                    errors.append(.init(field: "userIDs[\(index)]", message: "is not your friend (\(userID.key))"))
                }
            }
            var invitees: [(UUID, UUID?)] = userIDs.filter { $0 != caller }.map { ($0, nil) }
            if let groupID = request.groupID {
                let members = try await Self.members(of: groupID, awaiting: caller, on: connection, logger: logger) ?? []
                try Self.requireMembership(groupID, members: members, caller: caller)
                invitees += members.subtracting([caller]).sorted { $0.uuidString < $1.uuidString }.map { ($0, groupID) }
            }
            guard errors.isEmpty else { throw Problem.validation(errors) }
            var invitations: [Invitation] = []
            var already: [UUID] = []
            var seen = Set<UUID>()
            for (invitee, groupID) in invitees where seen.insert(invitee).inserted {
                if invitee == row.ownerID {
                    already.append(invitee)
                    continue
                }
                let invitationID = UUID()
                let inserted = try await connection.query(
                    """
                    INSERT INTO invitations (invitation_id, challenge_id, inviter_id, invitee_id, group_id, sent_at)
                    VALUES (\(invitationID), \(challengeID), \(caller), \(invitee), \(groupID), \(now))
                    ON CONFLICT (invitee_id, challenge_id) DO NOTHING RETURNING invitation_id
                    """, logger: logger
                ).collect()
                guard !inserted.isEmpty else {
                    already.append(invitee)
                    continue
                }
                try await outbox.append(
                    ChallengeInvitationSent(
                        invitationID: invitationID, challengeID: challengeID, challengeName: row.name, inviterID: caller, inviteeID: invitee,
                        groupID: groupID, sentAt: now),
                    on: connection, at: now, trace: trace, logger: logger)
                invitations.append(Invitation(invitationID: invitationID, challengeID: challengeID, inviteeID: invitee, groupID: groupID, sentAt: now))
            }
            return InvitationResult(invitations: invitations, alreadyInvited: already)
        }
    }

    // MARK: Likes and trending

    func setLike(_ challengeID: UUID, liked: Bool, caller: UUID, trace: TraceContext) async throws -> LikeState {
        let now = clock.now()
        let today = Trending.day(at: now)
        let logger = self.logger
        return try await client.transaction(logger: logger) { connection in
            let row = try await visibleRow(challengeID, caller: caller, forUpdate: true, on: connection)
            var likes = row.likes
            if liked {
                let inserted = try await connection.query(
                    """
                    INSERT INTO likes (challenge_id, user_id, liked_at) VALUES (\(challengeID), \(caller), \(now))
                    ON CONFLICT (challenge_id, user_id) DO NOTHING RETURNING liked_at
                    """, logger: logger
                ).collect()
                if !inserted.isEmpty {
                    likes += 1
                    try await Trending.record(likes: 1, challengeID: challengeID, on: today, connection: connection, logger: logger)
                }
            } else {
                let deleted = try await connection.query(
                    "DELETE FROM likes WHERE challenge_id = \(challengeID) AND user_id = \(caller) RETURNING liked_at", logger: logger
                ).collect()
                if let likedAt = try deleted.first?.decode(Date.self) {
                    likes -= 1
                    try await Trending.record(
                        likes: -1, challengeID: challengeID, on: Trending.day(at: likedAt), connection: connection, logger: logger)
                }
            }
            guard likes != row.likes else { return LikeState(challengeID: challengeID, likes: likes, likedByMe: liked) }
            try await connection.query(
                "UPDATE challenges SET likes_count = \(likes) WHERE challenge_id = \(challengeID)", logger: logger)
            try await Trending.refresh(challengeID, today: today, connection: connection, logger: logger)
            try await outbox.append(
                ChallengeLiked(challengeID: challengeID, userID: caller, liked: liked, likedAt: now), on: connection, at: now,
                trace: trace, logger: logger)
            return LikeState(challengeID: challengeID, likes: likes, likedByMe: liked)
        }
    }

    // MARK: Lists

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
                guard position.key.isFinite else { throw Problem.unknownCursor() }
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
        guard let key = Int(exactly: position.key) else { throw Problem.unknownCursor() }
        return key
    }

    func browse(_ query: BrowseQuery, page: PageRequest<BrowsePosition>, caller: UUID) async throws -> Page<ChallengeSummary> {
        if let position = page.after, position.sort != query.sort {
            throw Problem.unknownCursor()
        }
        let sql = try browseQuery(query, after: page.after, limit: page.limit + 1, caller: caller)
        let rows = try await client.query(sql, logger: logger)
        var fetched: [(ChallengeSummary, BrowsePosition)] = []
        let decoded = try await rows.collect().map { try $0.decode((String, Int, Int, Date, Int, Double).self) }
        for (text, likes, trending, created, latest, key) in decoded {
            let definition = try StoredJSON.definition(text)
            let summary = ChallengeSummary(
                definition: definition, latestVersion: latest, likes: likes, trendingScore: trending, createdAt: created,
                relevance: query.sort == .relevance ? key : nil)
            fetched.append((summary, BrowsePosition(sort: query.sort, key: key, id: definition.challengeID)))
        }
        return Self.page(fetched, limit: page.limit)
    }

    func mine(kind: ChallengeKind?, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ChallengeSummary> {
        var sql = SQLBuilder()
        let me = sql.bind(caller)
        sql.append("SELECT \(ChallengeQueries.summaryColumns), c.seq FROM \(ChallengeQueries.latestVersionJoin)\n")
        sql.append(
            "WHERE (c.owner_id = \(me) OR EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(me)))")
        sql.append("\n  AND \(ChallengeQueries.visibleTo(me))")
        if let kind { sql.append("\n  AND c.kind = \(sql.bind(kind.rawValue))") }
        if let after = page.after { sql.append("\n  AND c.seq < \(sql.bind(after.seq))") }
        sql.append("\nORDER BY c.seq DESC LIMIT \(sql.bind(page.limit + 1))")
        return try await sequencePage(sql.query, limit: page.limit)
    }

    func chores(groupID: UUID, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ChallengeSummary> {
        let member = try await client.withConnection { connection in
            try await CatchUp.standard.until { try await DirectoryStore.isMember(caller, of: groupID, on: connection, logger: logger) }
        }
        guard member else { throw Problem.notFound("No such group.") }
        var sql = SQLBuilder()
        let me = sql.bind(caller)
        sql.append("SELECT \(ChallengeQueries.summaryColumns), c.seq FROM \(ChallengeQueries.latestVersionJoin)\n")
        sql.append("WHERE c.group_id = \(sql.bind(groupID)) AND c.kind = 'chore' AND \(ChallengeQueries.visibleTo(me))")
        if let after = page.after { sql.append("\n  AND c.seq < \(sql.bind(after.seq))") }
        sql.append("\nORDER BY c.seq DESC LIMIT \(sql.bind(page.limit + 1))")
        return try await sequencePage(sql.query, limit: page.limit)
    }

    private func sequencePage(_ query: PostgresQuery, limit: Int) async throws -> Page<ChallengeSummary> {
        let rows = try await client.query(query, logger: logger)
        var fetched: [(ChallengeSummary, SequencePosition)] = []
        let decoded = try await rows.collect().map { try $0.decode((String, Int, Int, Date, Int, Int).self) }
        for (text, likes, trending, created, latest, seq) in decoded {
            let summary = ChallengeSummary(
                definition: try StoredJSON.definition(text), latestVersion: latest, likes: likes, trendingScore: trending, createdAt: created,
                relevance: nil)
            fetched.append((summary, SequencePosition(seq: seq)))
        }
        return Self.page(fetched, limit: limit)
    }

    /// A page from up to `limit + 1` fetched rows: the extra row only says there is more.
    static func page<Position: Codable & Sendable>(_ fetched: [(ChallengeSummary, Position)], limit: Int) -> Page<ChallengeSummary> {
        let kept = fetched.prefix(limit)
        let next = fetched.count > limit ? kept.last.map { Cursor.encode($0.1) } : nil
        return Page(items: kept.map(\.0), nextCursor: next)
    }
}

/// Trending: joins and likes per challenge over the last seven UTC days (today and the six before), kept as a score
/// on the challenge row so the trending sort reads an index. Writes refresh the one challenge they touch; a periodic
/// `refreshAll` (`TRENDING_REFRESH_SECONDS`, default 10 minutes) lets old days drop out of the window.
enum Trending {
    static let utcZone = LocalCalendar.utc.timeZone
    static let utc = LocalCalendar.utc
    static let windowDays = 7

    static func day(at instant: Date) -> LocalDate { utc.date(at: instant) }

    static func record(
        likes: Int = 0, joins: Int = 0, challengeID: UUID, on day: LocalDate, connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO challenge_activity (challenge_id, day, joins, likes)
            SELECT \(challengeID), \(day.description)::date, GREATEST(\(joins), 0), GREATEST(\(likes), 0)
            WHERE EXISTS (SELECT 1 FROM challenges WHERE challenge_id = \(challengeID))
            ON CONFLICT (challenge_id, day) DO UPDATE SET joins = GREATEST(challenge_activity.joins + \(joins), 0),
                likes = GREATEST(challenge_activity.likes + \(likes), 0)
            """, logger: logger)
    }

    static func refresh(_ challengeID: UUID, today: LocalDate, connection: PostgresConnection, logger: Logger) async throws {
        let from = today.adding(days: -(windowDays - 1)).description
        try await connection.query(
            """
            UPDATE challenges SET trending_score = (
                SELECT COALESCE(sum(joins + likes), 0)::integer FROM challenge_activity
                WHERE challenge_id = \(challengeID) AND day >= \(from)::date)
            WHERE challenge_id = \(challengeID)
            """, logger: logger)
    }

    /// Recomputes every score that is not zero or has activity in the window; returns how many changed.
    @discardableResult
    static func refreshAll(today: LocalDate, client: PostgresClient, logger: Logger) async throws -> Int {
        let from = today.adding(days: -(windowDays - 1)).description
        let rows = try await client.query(
            """
            WITH scores AS (
                SELECT challenge_id, sum(joins + likes)::integer AS score FROM challenge_activity
                WHERE day >= \(from)::date GROUP BY challenge_id
            ), targets AS (
                SELECT challenge_id FROM challenges WHERE trending_score > 0
                UNION SELECT challenge_id FROM scores
            )
            UPDATE challenges c SET trending_score = COALESCE(s.score, 0)
            FROM targets t LEFT JOIN scores s ON s.challenge_id = t.challenge_id
            WHERE c.challenge_id = t.challenge_id AND c.trending_score <> COALESCE(s.score, 0)
            RETURNING c.challenge_id
            """, logger: logger)
        return try await rows.collect().count
    }
}
