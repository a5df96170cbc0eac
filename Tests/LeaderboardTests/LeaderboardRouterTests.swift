import Foundation
import LeaderboardDomain
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import LeaderboardService

/// `BoardsController`'s routes on the router `LeaderboardService.addRoutes` builds, over PostgreSQL.
@Suite("Leaderboard: routes", .tags(.integration), .kind(.integration, needsDatabase: true))
struct LeaderboardRouterTests {
    let ann = UUID(), ben = UUID(), cy = UUID(), dee = UUID()

    @Test("a group's board: every member ranked (0 until they score), paged, around the caller, the caller's standing, past weeks with their winners; 404 to an outsider and for a window not begun; 422 naming `window` or `kind`; no caller is 401")
    func groupBoard() async throws {
        let household = UUID()
        try await LeaderboardRoutes.run { routes in
            try await routes.profiles([ann: "Ann", ben: "Ben", cy: "Cy", dee: "Dee"])
            try await routes.record { connection, logger in
                try await DirectoryStore(connection: connection, logger: logger).saveGroup(household, name: "Household", timeZone: "Europe/Rome", at: LeaderboardRoutes.now)
                for member in [ann, ben, cy] { try await DirectoryStore(connection: connection, logger: logger).setMembership(household, member, member: true) }
            }
            let board = Board(.group, household)
            try await routes.score(30, for: ann, on: board)
            try await routes.score(10, for: ben, on: board)
            try await routes.score(5, for: ben, on: board, day: LeaderboardRoutes.today.adding(days: -7))
            let path = "/v1/leaderboards/groups/\(household.key)"

            let first = try await routes.get("\(path)?limit=2", as: ann)
            #expect(first.status == .ok)
            let page = try first.decode(BoardPageView.self)
            #expect(page.board.name == "Household" && page.window.key == "2026-W47" && page.window.timeZone == "Europe/Rome")
            #expect(page.items.map(\.userID) == [ann, ben] && page.items.map(\.rank) == [1, 2] && page.items.map(\.leader) == [true, false])
            #expect(page.me.rank == 1 && page.me.participants == 3)
            let cursor = try #require(page.nextCursor)
            let rest = try await routes.get("\(path)?limit=2&cursor=\(cursor)", as: ann).decode(BoardPageView.self)
            #expect(rest.items.map(\.displayName) == ["Cy"] && rest.items.first?.score == 0 && rest.nextCursor == nil)
            #expect(try await routes.get("\(path)/around-me?limit=1", as: cy).decode(BoardPageView.self).items.map(\.isCaller) == [true])
            let standing = try await routes.get("\(path)/me?window=month", as: ben).decode(MyStandingView.self)
            #expect(standing.rank == 2 && standing.score == 15 && standing.topPercent == 67)
            let history = try await routes.get("\(path)/history", as: cy).decode(BoardHistoryView.self)
            #expect(history.items.map(\.window.key) == ["2026-W46"] && history.items.first?.winners.map(\.userID) == [ben])

            #expect(try await routes.get("\(path)?window=2027-W01", as: ann).problem?.slug == "not-found")
            for (target, field) in [("\(path)?window=yesterday", "window"), ("\(path)/me?window=all-time-ish", "window"), ("\(path)/history?kind=year", "kind")] {
                let refused = try await routes.get(target, as: ann)
                #expect(refused.status == .unprocessableContent && refused.problem?.fields == [field], "\(target)")
            }
            #expect(try await routes.get(path, as: dee).problem?.slug == "not-found", "an outsider")
            #expect(try await routes.get(path, as: nil).problem?.slug == "unauthorized")
        }
    }

    @Test("a challenge's board for those who may see it, and its friends' board ranked among them; the caller's boards; the export; 404 to others; no caller is 401")
    func challengeBoard() async throws {
        let challengeID = UUID()
        let definition = ChallengeDefinition(
            challengeID: challengeID, version: 1, effectiveFrom: nil, kind: .habit, name: "Water", description: "", category: "health",
            difficulty: .beginner, visibility: .private, ownerID: ann, groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "drink", title: "Drink", kind: .checkbox)], rules: ChallengeRules(failure: FailureRule(mode: .none)))
        try await LeaderboardRoutes.run { routes in
            try await routes.profiles([ann: "Ann", ben: "Ben", cy: "Cy", dee: "Dee"])
            try await routes.record { connection, logger in
                try await DirectoryStore(connection: connection, logger: logger).saveChallenge(definition)
                for user in [ann, ben, cy] { try await DirectoryStore(connection: connection, logger: logger).addParticipant(user, to: challengeID) }
                try await DirectoryStore(connection: connection, logger: logger).setFriendship(ann, ben, friends: true)
            }
            let board = Board(.challenge, challengeID)
            for (user, points) in [(ann, 10.0), (ben, 20), (cy, 30)] { try await routes.score(points, for: user, on: board) }
            let path = "/v1/leaderboards/challenges/\(challengeID.key)"

            let standings = try await routes.get(path, as: ben)
            #expect(standings.status == .ok)
            let page = try standings.decode(BoardPageView.self)
            #expect(page.board.name == "Water" && page.board.measure == "points")
            #expect(page.items.map(\.userID) == [cy, ben, ann] && page.me.rank == 2)
            let friends = try await routes.get("\(path)/friends", as: ann).decode(BoardPageView.self)
            #expect(friends.items.map(\.userID) == [ben, ann] && friends.items.map(\.rank) == [1, 2] && friends.me.rank == 2)
            #expect(try await routes.get("\(path)/me?window=all-time", as: cy).decode(MyStandingView.self).rank == 1)

            let boards = try await routes.get("/v1/leaderboards", as: ann).decode(BoardListView.self)
            #expect(boards.items.map(\.board.id) == [challengeID])
            #expect(boards.items.first?.leaders.map(\.userID) == [cy] && boards.items.first?.me.rank == 3)
            #expect(try await routes.get("/v1/leaderboards", as: dee).decode(BoardListView.self).items.isEmpty)
            let export = try await routes.get("/internal/export", as: ann).decode(LeaderboardExport.self)
            #expect(export.scores.map(\.window).sorted() == ["2026-11", "2026-W47", "all-time"] && export.scores.allSatisfy { $0.score == 10 })

            for target in [path, "/v1/leaderboards/challenges/\(UUID().key)/me", "/v1/leaderboards/challenges/water"] {
                #expect(try await routes.get(target, as: dee).problem?.slug == "not-found", "\(target)")
            }
            for target in ["/v1/leaderboards", "\(path)/friends", "/internal/export"] {
                #expect(try await routes.get(target, as: nil).status == .unauthorized, "\(target)")
            }
        }
    }
}
