import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesDomain
@testable import ChallengesService

/// The challenges schema of a fresh test database, migrated and seeded, with the use cases over it and a simulated
/// clock set to Tuesday 10 March 2026, 12:00 UTC.
struct Harness: Sendable {
    let storage: ChallengeStorage
    let lists: ChallengeListStore
    let client: PostgresClient
    let database: TestDatabase
    let clock: ServiceClock
    let outbox: Outbox
    let logger: Logger

    static let start = Fixtures.instant("2026-03-10T12:00:00Z")

    static func run(_ body: @Sendable (Harness) async throws -> Void) async throws {
        try await withTestDatabase(services: ["challenges"]) { database in
            let logger = Logger.test("challenges")
            let client = database.configuration(for: "challenges").makeClient(schema: "challenges", logger: logger)
            try await PostgresClient.withRunning(client) { client in
                try await Migrator.migrate([MessagingMigrations.set, ChallengesMigrations.set], schema: "challenges", client: client, logger: logger)
                let clock = ServiceClock(simulated: true)
                clock.set(start)
                let outbox = Outbox(service: "challenges")
                let storage = ChallengeStorage(client: client, outbox: outbox, logger: logger)
                try await ContentSeeder(storage: storage).seed(now: clock.now())
                let harness = Harness(
                    storage: storage, lists: ChallengeListStore(client: client, logger: logger), client: client, database: database,
                    clock: clock, outbox: outbox, logger: logger)
                try await body(harness)
            }
        }
    }

    var now: @Sendable () -> Date { { [clock] in clock.now() } }
    var reading: ChallengeReading { ChallengeReading(storage: storage, now: now) }
    var authoring: ChallengeAuthoring { ChallengeAuthoring(storage: storage, now: now) }
    var invitations: ChallengeInvitations { ChallengeInvitations(storage: storage, now: now) }
    var likes: ChallengeLikes { ChallengeLikes(storage: storage, now: now) }
    var browsing: ChallengeBrowsing { ChallengeBrowsing(lists: lists, storage: storage) }
    var seeder: ContentSeeder { ContentSeeder(storage: storage) }

    /// A user as identity's `UserRegistered` would have taught us.
    func user(zone: String = "Europe/Rome", name: String = "Someone") async throws -> UUID {
        let id = UUID()
        try await client.withConnection { connection in
            try await DirectoryStore(connection: connection, logger: logger).upsertUser(id, displayName: name, timeZone: zone)
        }
        return id
    }

    func befriend(_ first: UUID, _ second: UUID) async throws {
        try await client.withConnection { connection in
            try await DirectoryStore(connection: connection, logger: logger).setFriendship(first, second, accepted: true, at: Date())
        }
    }

    /// A household (or other group) with these members, the first its owner.
    func group(_ members: [UUID], zone: String = "Europe/Rome", kind: GroupKind = .household) async throws -> UUID {
        let id = UUID()
        try await client.withConnection { connection in
            try await DirectoryStore(connection: connection, logger: logger).upsertGroup(
                GroupChanged(groupID: id, name: "Home", kind: kind, timeZone: zone, ownerID: members[0], created: true, changedAt: Date()))
            for (index, member) in members.enumerated() {
                try await DirectoryStore(connection: connection, logger: logger).applyMembership(
                    GroupMembershipChanged(
                        groupID: id, userID: member, displayName: "m", role: index == 0 ? .owner : .member, change: .joined, changedAt: Date()))
            }
        }
        return id
    }

    func leave(_ groupID: UUID, _ member: UUID) async throws {
        try await client.withConnection { connection in
            try await DirectoryStore(connection: connection, logger: logger).applyMembership(
                GroupMembershipChanged(groupID: groupID, userID: member, displayName: "m", role: .member, change: .left, changedAt: Date()))
        }
    }

    /// The payloads of outbox events of one type, oldest first.
    func events<Payload: EventPayload>(_ type: Payload.Type) async throws -> [Payload] {
        let rows = try await client.query(
            "SELECT payload::text FROM outbox WHERE type = \(Payload.eventType) ORDER BY position", logger: logger
        ).collect()
        return try rows.map { try SurgeJSON.decode(Payload.self, from: Data(try $0.decode(String.self).utf8)) }
    }

    func count(_ query: PostgresQuery) async throws -> Int {
        try await client.query(query, logger: logger).collect().first?.decode(Int.self) ?? 0
    }

    // What the use cases answer, as the API shows it.

    func create(_ draft: ChallengeDraft, by caller: UUID) async throws -> ChallengeDetail {
        ChallengeDetail(try await authoring.create(draft, caller: caller, trace: TraceContext()))
    }

    func update(_ challengeID: UUID, _ patch: ChallengePatch, by caller: UUID) async throws -> ChallengeDetail {
        ChallengeDetail(try await authoring.update(challengeID, patch: patch, caller: caller, trace: TraceContext()))
    }

    func detail(_ challengeID: UUID, as caller: UUID) async throws -> ChallengeDetail {
        ChallengeDetail(try await reading.detail(challengeID, caller: caller))
    }

    func version(_ number: Int, of challengeID: UUID, as caller: UUID) async throws -> ChallengeDetail {
        ChallengeDetail(try await reading.version(number, of: challengeID, caller: caller))
    }

    func browse(_ query: BrowseQuery = BrowseQuery(), limit: Int = 100, after: String? = nil, as caller: UUID) async throws -> Page<ChallengeSummary> {
        let position = after.flatMap { Cursor.decode(BrowsePosition.self, from: $0) }
        return ChallengeSummary.page(try await browsing.browse(query, page: PageRequest(limit: limit, after: position), caller: caller))
    }

    func mine(as caller: UUID) async throws -> Page<ChallengeSummary> {
        ChallengeSummary.page(try await browsing.mine(kind: nil, page: PageRequest(limit: 10, after: nil), caller: caller))
    }

    func chores(_ groupID: UUID, as caller: UUID) async throws -> Page<ChallengeSummary> {
        ChallengeSummary.page(try await browsing.chores(groupID: groupID, page: PageRequest(limit: 10, after: nil), caller: caller))
    }

    /// Every page of a browse, following the cursors.
    func browseAll(_ query: BrowseQuery, limit: Int, as caller: UUID) async throws -> [ChallengeSummary] {
        var items: [ChallengeSummary] = []
        var cursor: String?
        repeat {
            let page = try await browse(query, limit: limit, after: cursor, as: caller)
            items += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return items
    }

    static func publicCompetition(_ name: String, description: String = "A friendly battle") -> ChallengeDraft {
        var draft = Fixtures.competition
        draft.name = name
        draft.description = description
        draft.visibility = .public
        return draft
    }
}

/// The problem an operation answered with (a domain error as its service describes it); records an issue if it succeeded or failed otherwise.
func problem(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> Problem? {
    do {
        try await body()
        Issue.record("expected a problem, the operation succeeded", sourceLocation: sourceLocation)
    } catch let problem as Problem {
        return problem
    } catch let error as any ProblemDescribing {
        return error.problem
    } catch {
        Issue.record("expected a problem, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
