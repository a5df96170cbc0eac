import Foundation
import LeaderboardDomain
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import LeaderboardService

@Suite("Leaderboard: rank changes", .tags(.unit), .kind(.unit))
struct ScoringTests {
    let ana = UUID(), ben = UUID(), cy = UUID(), dee = UUID(), eve = UUID()

    func board(_ scores: [(UUID, Double, String)]) -> RankIndex {
        var index = RankIndex()
        for (id, score, name) in scores { index.set(id, score: score, name: name) }
        return index
    }

    @Test("a rise names everyone passed, ties at the old score included, and no one still ahead")
    func rise() throws {
        let index = board([(ana, 50, "Ana"), (ben, 30, "Ben"), (cy, 20, "Cy"), (dee, 20, "Dee"), (eve, 10, "Eve")])
        let move = try #require(index.move(dee, from: index.standing(of: dee), to: 40, naming: 20))
        #expect(move.rank == 2)
        #expect(Set(move.overtook) == [ben, cy])
        #expect(move.overtakenBy.isEmpty)
    }

    @Test("reaching a tie shares the rank and passes no one; a gain that changes no rank is no event")
    func ties() throws {
        let index = board([(ana, 50, "Ana"), (ben, 30, "Ben"), (cy, 20, "Cy")])
        let tie = try #require(index.move(cy, from: index.standing(of: cy), to: 30, naming: 20))
        #expect(tie.rank == 2)
        #expect(tie.overtook.isEmpty)
        #expect(index.move(ben, from: index.standing(of: ben), to: 45, naming: 20) == nil)
    }

    @Test("a fall (a correction) names who is now ahead")
    func fall() throws {
        let index = board([(ana, 50, "Ana"), (ben, 30, "Ben"), (cy, 20, "Cy"), (dee, 10, "Dee")])
        let move = try #require(index.move(ana, from: index.standing(of: ana), to: 15, naming: 20))
        #expect(move.rank == 3)
        #expect(Set(move.overtakenBy) == [ben, cy])
        #expect(move.overtook.isEmpty)
    }

    @Test("a newcomer passes everyone below their first score (ties and those ahead excluded); the lists are capped")
    func newcomerAndCap() throws {
        var index = RankIndex()
        let others = (0..<30).map { _ in UUID() }
        for (offset, id) in others.enumerated() { index.set(id, score: Double(offset), name: "U\(offset)") }
        let newcomer = try #require(index.move(ana, from: index.standing(of: ana), to: 15, naming: 20))
        #expect(newcomer.rank == 15)
        #expect(Set(newcomer.overtook) == Set(others[0..<15]))
        #expect(newcomer.overtakenBy.isEmpty)
        let last = try #require(index.move(ben, from: index.standing(of: ben), to: -1, naming: 20))
        #expect(last.rank == 31)
        #expect(last.overtook.isEmpty)
        index.set(ana, score: 0, name: "Ana")
        let rocket = try #require(index.move(ana, from: index.standing(of: ana), to: 100, naming: 20))
        #expect(rocket.rank == 1)
        #expect(rocket.overtook.count == 20)
    }

    @Test("windows of a day: its ISO week, its month and all time")
    func windows() {
        #expect(Windows.of(LocalDate("2024-12-30")!).map(\.description) == ["2025-W01", "2024-12", "all-time"])
    }
}
