import BadgesDomain
import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import BadgesService

/// `BadgesController`'s routes on the router `BadgesService.addRoutes` builds, over PostgreSQL.
@Suite("Badges: routes", .tags(.integration), .kind(.integration, needsDatabase: true))
struct BadgesRouterTests {
    let ann = UUID(), ben = UUID(), cy = UUID()

    @Test("the catalogue: rarity among every user, a secret badge hidden until earned; a challenge's own badges for who joined it, 404 for others, 422 for an id that is no UUID; no caller is 401")
    func catalogue() async throws {
        let challengeID = UUID()
        let definition = ChallengeDefinition(
            challengeID: challengeID, version: 3, effectiveFrom: nil, kind: .habit, name: "Water", description: "", category: "health",
            difficulty: .beginner, visibility: .private, ownerID: ann, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "drink", title: "Drink", kind: .checkbox)], rules: ChallengeRules(failure: FailureRule(mode: .none)),
            badges: [ChallengeBadge(id: "three-days", title: "Three days of water", rule: .init(kind: .streak, threshold: 3))])
        try await BadgesRoutes.run { routes in
            try await routes.record { store in
                for user in [ann, ben] { try await store.saveUser(user) }
                _ = try await store.saveChallenge(definition)
                try await store.join(challengeID, ann)
            }
            try await routes.choreCompleted(by: ann)

            let listed = try await routes.get("/v1/badges", as: ben)
            #expect(listed.status == .ok)
            let catalogue = try listed.decode(CatalogueView.self)
            #expect(catalogue.users == 2 && catalogue.challengeID == nil)
            let chores = try #require(catalogue.items.first { $0.badgeID == "chores" })
            #expect(chores.levels.map(\.holders) == [1, 0, 0])
            #expect(chores.levels.first?.rarityPercent == 50)
            let secret = try #require(catalogue.items.first { $0.badgeID == "all-rounder" })
            #expect(secret.secret && secret.title == "Secret badge" && secret.levels.isEmpty)

            let own = try await routes.get("/v1/badges?challengeID=\(challengeID.key)", as: ann)
            #expect(own.status == .ok)
            let ownCatalogue = try own.decode(CatalogueView.self)
            #expect(ownCatalogue.challengeID == challengeID && ownCatalogue.version == 3 && ownCatalogue.users == 1)
            #expect(ownCatalogue.items.map(\.title) == ["Three days of water"])
            for user in [ben, cy] {
                #expect(try await routes.get("/v1/badges?challengeID=\(challengeID.key)", as: user).problem?.slug == "not-found")
            }
            let malformed = try await routes.get("/v1/badges?challengeID=water", as: ann)
            #expect(malformed.status == .unprocessableContent && malformed.problem?.fields == ["challengeID"])
            #expect(try await routes.get("/v1/badges", as: nil).problem?.slug == "unauthorized")
        }
    }

    @Test("the caller's badges earned and locked with progress; another user's earned badges for a friend, 404 for a stranger; the export; no caller is 401")
    func earned() async throws {
        try await BadgesRoutes.run { routes in
            try await routes.record { store in
                for user in [ann, ben, cy] { try await store.saveUser(user) }
                try await store.setFriendship(ann, ben, friends: true)
            }
            try await routes.choreCompleted(by: ann)

            let mine = try await routes.get("/v1/me/badges", as: ann)
            #expect(mine.status == .ok)
            let badges = try mine.decode(MyBadgesView.self)
            #expect(badges.earned.map(\.title) == ["First Chore Done"])
            let nextChores = try #require(badges.locked.first { $0.badgeID == "chores" })
            #expect(nextChores.level == 2 && nextChores.current == 1 && nextChores.target == 10)
            #expect(!badges.locked.contains { $0.badgeID == "all-rounder" }, "a secret badge is not listed before it is earned")

            for viewer in [ann, ben] {
                let seen = try await routes.get("/v1/users/\(ann.key)/badges", as: viewer)
                #expect(seen.status == .ok)
                #expect(try seen.decode(UserBadgesView.self).earned.map(\.badgeID) == ["chores"])
            }
            for target in ["/v1/users/\(ann.key)/badges", "/v1/users/\(UUID().key)/badges", "/v1/users/ann/badges"] {
                #expect(try await routes.get(target, as: cy).problem?.slug == "not-found", "\(target)")
            }

            let export = try await routes.get("/internal/export", as: ann).decode(BadgesExport.self)
            #expect(export.badges.map(\.badgeID) == ["chores"])
            #expect(export.facts.contains { $0.name == "chores" && $0.value == 1 })
            for target in ["/v1/me/badges", "/v1/users/\(ann.key)/badges", "/internal/export"] {
                #expect(try await routes.get(target, as: nil).status == .unauthorized, "\(target)")
            }
        }
    }
}
