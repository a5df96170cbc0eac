import BadgesDomain
import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import SurgeTestSupport
import Testing

@testable import BadgesService

/// The rebuild applies history to `MemoryBadgeStore` and writes it out (`RebuildWriter`); the consumer applies it to
/// `PostgresBadgeStore`. The same operations on both must answer the same and leave the same rows.
@Suite("Badges: the rebuild's memory store and the consumer's store agree", .tags(.integration), .kind(.integration, needsDatabase: true))
struct BadgeStoreParityTests {
    let ann = UUID(), ben = UUID(), cy = UUID(), dee = UUID(), group = UUID(), challenge = UUID()

    @Test("users, erasure, friendships, members, facts, awards, challenges and participants: same answers, same rows")
    func sameAnswersAndRows() async throws {
        try await BadgesRoutes.run { routes in
            let memory = LockedValue(MemoryBadgeStore())
            let answers = LockedValue<[String]>([])
            try await routes.record { store in
                var rebuilt = memory.value
                let fromPostgres = try await script(&store)
                let fromMemory = try await script(&rebuilt)
                #expect(fromMemory == fromPostgres)
                answers.withLock { $0 = fromPostgres }
                memory.withLock { $0 = rebuilt }
            }
            #expect(answers.value.count > 10)
            #expect(answers.value.contains("added together, in order Optional([2, 4])") && answers.value.contains("raised together, in order Optional([5, 5])"))
            #expect(answers.value.contains("erased facts kept nil"))
            let written = try await rows(routes)
            #expect(written["awards"]?.isEmpty == false && written["challenges"]?.count == 1)
            try await routes.database.withConnection { connection in
                try await connection.query(
                    "TRUNCATE users, erased_users, friendships, group_members, facts, awards, challenges, participants", logger: routes.logger)
                try await RebuildWriter(connection: connection, logger: routes.logger).write(memory.value)
            }
            #expect(try await rows(routes) == written)
        }
    }

    /// Every kind of change, with what each answers, in order.
    private func script<Store: BadgeStore>(_ store: inout Store) async throws -> [String] {
        var answers: [String] = []
        for user in [ann, ben, cy, dee] { try await store.saveUser(user) }
        try await store.setFriendship(ben, ann, friends: true)
        try await store.setFriendship(ann, cy, friends: true)
        try await store.setFriendship(cy, ann, friends: false)
        try await store.setFriendship(ben, dee, friends: true)
        try await store.setMembership(group, ann, member: true)
        try await store.setMembership(group, cy, member: true)
        try await store.setMembership(group, cy, member: false)
        try await store.setMembership(group, dee, member: true)

        let badges = [ChallengeBadge(id: "steady", title: "Tab\tback\\slash\nnew line", rule: .init(kind: .streak, threshold: 3))]
        answers.append("saved \(try await store.saveChallenge(definition(version: 2, badges: badges)))")
        answers.append("older saved \(try await store.saveChallenge(definition(version: 1, badges: [])))")
        answers.append("kind \(String(describing: try await store.challengeKind(challenge)))")
        answers.append("own badges \(try await store.challengeBadges(challenge).badges.map { "\($0.id) \($0.title)" })")
        answers.append("unknown challenge's badges \(try await store.challengeBadges(UUID()).badges.count)")

        let streak = Fact(name: Fact.streak, scope: "challenge:\(challenge.key)")
        let chores = Fact(name: Rule.Measure.chores.rawValue, scope: "all")
        for (user, value) in [(ann, 4), (ben, 2), (dee, 7)] { answers.append("raised \(try await store.change([streak], .raise(value), of: user, heldAmong: [])?.values)") }
        answers.append("kept \(try await store.change([streak], .raise(1), of: ann, heldAmong: [])?.values)")
        for user in [ann, ann, ben, dee] { answers.append("added \(try await store.change([chores], .add(1), of: user, heldAmong: [])?.values)") }
        let choresInKind = Fact(name: Rule.Measure.chores.rawValue, scope: "kind:chore")
        answers.append("added together, in order \(try await store.change([choresInKind, chores], .add(2), of: ann, heldAmong: [])?.values)")
        answers.append("raised together, in order \(try await store.change([choresInKind, streak], .raise(5), of: ann, heldAmong: [])?.values)")
        answers.append("at least 3 \(try await store.users(with: streak, atLeast: 3).map { "\($0.0.key)=\($0.1)" }.sorted())")

        let first = Award(badgeID: "chores", level: 1, period: "", title: "Chores \"I\"")
        let weekly = Award(badgeID: "weekly-goal", level: 1, period: "2026-W48", title: "Week\t48\r\nfinal \\o/")
        let time = Date(timeIntervalSince1970: 1_795_000_000.125)
        for (user, award) in [(ann, first), (ann, first), (ann, weekly), (dee, first), (ben, weekly)] {
            answers.append("awarded \(try await store.award(award, to: user, at: time, backfilled: user == ben))")
        }
        answers.append("held \(try await store.heldBadges(of: ann).sorted())")

        try await store.join(challenge, ann)
        try await store.join(challenge, dee)
        try await store.erase(dee)
        answers.append("erased \(try await store.isErased(dee)) \(try await store.isErased(ann))")
        answers.append("erased holds \(try await store.heldBadges(of: dee).sorted())")
        answers.append("erased facts kept \(String(describing: try await store.change([chores], .add(1), of: dee, heldAmong: [])?.values))")
        try await store.saveUser(dee)
        try await store.join(challenge, dee)
        try await store.deleteChallenge(challenge)
        answers.append("after erasure \(try await store.users(with: streak, atLeast: 1).map(\.0.key).sorted())")
        return answers
    }

    @Test("a fact change reads, in its statement, the levels the user holds of the badges asked about (not another period's, not another badge's)")
    func heldLevels() async throws {
        try await BadgesRoutes.run { routes in
            try await routes.record { store in
                let chores = Fact(name: Rule.Measure.chores.rawValue, scope: "all")
                let time = Date(timeIntervalSince1970: 1_795_000_000)
                for award in [
                    Award(badgeID: "chores", level: 1, period: "", title: "I"), Award(badgeID: "chores", level: 2, period: "", title: "II"),
                    Award(badgeID: "weekly-goal", level: 1, period: "2026-W48", title: "Week 48"), Award(badgeID: "streak", level: 1, period: "", title: "S"),
                ] {
                    _ = try await store.award(award, to: ann, at: time, backfilled: false)
                }
                let changed = try await store.change([chores], .add(3), of: ann, heldAmong: ["chores", "weekly-goal"])
                #expect(changed?.values == [3])
                #expect(changed?.held == [BadgeLevel(badgeID: "chores", level: 1), BadgeLevel(badgeID: "chores", level: 2)])
                #expect(try await store.change([chores], .raise(2), of: ann, heldAmong: ["other"])?.values == [3])
                #expect(try await store.change([chores], .add(1), of: ben, heldAmong: ["chores"])?.held == [])
            }
        }
    }

    private func definition(version: Int, badges: [ChallengeBadge]) -> ChallengeDefinition {
        ChallengeDefinition(
            challengeID: challenge, version: version, effectiveFrom: nil, kind: .habit, name: "Water", description: "", category: "health",
            difficulty: .beginner, visibility: .group, ownerID: ann, groupID: group, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "drink", title: "Drink", kind: .checkbox)], rules: ChallengeRules(failure: FailureRule(mode: .none)),
            badges: badges)
    }

    /// Every table the rebuild writes, each row as text, sorted.
    private func rows(_ routes: BadgesRoutes) async throws -> [String: [String]] {
        var tables: [String: [String]] = [:]
        for table in ["users", "erased_users", "friendships", "group_members", "facts", "awards", "challenges", "participants"] {
            tables[table] = try await routes.database.query(PostgresQuery(unsafeSQL: "SELECT t::text FROM \(table) t"), logger: routes.logger)
                .collect().map { try $0.decode(String.self) }.sorted()
        }
        return tables
    }
}
