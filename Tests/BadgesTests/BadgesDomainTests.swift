import BadgesDomain
import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Badges: the catalogue and what earns a badge", .tags(.unit), .kind(.unit))
struct BadgesDomainTests {
    static func catalogue(_ badges: String) throws -> BadgeCatalogue {
        try BadgeCatalogue.load(Data((#"{"version": 1, "badges": ["# + badges + "]}").utf8))
    }

    static func error(_ badges: String) -> String {
        do {
            _ = try catalogue(badges)
            return "loaded"
        } catch {
            return "\(error)"
        }
    }

    static let chores = #"{"id": "chores", "title": "Chores", "levels": [{"title": "First", "threshold": 1}, {"title": "Ten", "threshold": 10}, {"title": "Fifty", "threshold": 50}], "rule": {"kind": "count", "of": "chores"}}"#

    @Test("The built-in catalogue loads: 004's chores, 000's streaks, 001's weekly challenge with 200 points, a secret composite")
    func standard() throws {
        let catalogue = try BadgeCatalogue.standard()
        #expect(catalogue.badge("chores")?.levels.map(\.threshold) == [1, 10, 50])
        #expect(catalogue.badge("chores")?.levels.map(\.title) == ["First Chore Done", "10 Tasks Completed", "50 Tasks Completed"])
        #expect(catalogue.badge("streak")?.levels.map(\.threshold) == [7, 14, 30, 60, 75, 100])
        #expect(catalogue.badge("weekly-challenge")?.bonusPoints == 200)
        #expect(catalogue.badge("weekly-challenge")?.isPerPeriod == true)
        #expect(catalogue.badge("75-hard")?.rule == .count(.challengesCompleted, .challenge(UUID(uuidString: "c4a11e00-0075-4000-8000-000000000001")!)))
        #expect(catalogue.badge("all-rounder")?.secret == true)
        #expect(catalogue.badge("household-champion")?.rule == .firstPlace(.week))
    }

    @Test("A broken catalogue is refused whole, with one line naming the badge")
    func brokenCatalogues() {
        let cases: [(String, String)] = [
            (Self.chores + "," + Self.chores, "badge chores is defined twice"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "levitate"}}"#, "badge x has a rule of unknown kind levitate (count, challengeCompleted, streak, weeklyChallenge, weeklyGoal, firstPlace, allOf)"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 10}, {"title": "b", "threshold": 5}], "rule": {"kind": "count", "of": "chores"}}"#,
             "badge x has level 2 out of order: its threshold 5 must be above 10"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 0}], "rule": {"kind": "count", "of": "chores"}}"#,
             "badge x has level 1 out of order: its threshold 0 must be above 0"),
            (#"{"id": "x", "title": "X", "levels": [], "rule": {"kind": "count", "of": "chores"}}"#, "badge x needs at least one level"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "count", "of": "sit-ups"}}"#,
             "badge x counts sit-ups: of must be one of chores, check-ins, challenges-completed, days-completed"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "allOf", "badges": ["nope"]}}"#,
             "badge x lists an unknown badge nope"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 1}, {"title": "b", "threshold": 2}], "rule": {"kind": "weeklyChallenge"}}"#,
             "badge x is earned per period: one level, threshold 1"),
            (#"{"id": "x", "title": "X", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "streak", "challengeKind": "habit", "challengeID": "c4a11e00-0075-4000-8000-000000000001"}}"#,
             "badge x names both a challengeKind and a challengeID: pick one"),
            (#"{"id": "X Y", "title": "X", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "streak"}}"#,
             "badge X Y needs an id of lowercase letters, digits and dashes (at most 64)"),
            (#"{"id": "x", "levels": [{"title": "a", "threshold": 1}], "rule": {"kind": "streak"}}"#, "badge x needs a title"),
        ]
        for (badges, expected) in cases {
            #expect(Self.error(badges) == "badge catalogue: \(expected)", "\(badges)")
        }
        #expect(Self.error("{") .hasPrefix("badge catalogue is not a catalogue document"))
    }

    @Test("Levels are reached at their thresholds exactly: 1, 10 and 50 chores")
    func levelBoundaries() throws {
        let catalogue = try Self.catalogue(Self.chores)
        let chores = Fact(name: "chores", scope: "")
        #expect(Awarding.reached(catalogue, fact: chores, value: 0).isEmpty)
        #expect(Awarding.reached(catalogue, fact: chores, value: 1).map(\.level) == [1])
        #expect(Awarding.reached(catalogue, fact: chores, value: 9).map(\.level) == [1])
        #expect(Awarding.reached(catalogue, fact: chores, value: 10).map(\.level) == [1, 2])
        #expect(Awarding.reached(catalogue, fact: chores, value: 49).map(\.level) == [1, 2])
        #expect(Awarding.reached(catalogue, fact: chores, value: 50).map(\.title) == ["First", "Ten", "Fifty"])
        #expect(Awarding.reached(catalogue, fact: Fact(name: "chores", scope: "kind:chore"), value: 50).isEmpty, "a scoped fact is another fact")
    }

    @Test("A scoped rule reads its scope's fact: a streak in habits, a count in one challenge")
    func scopes() throws {
        let id = UUID()
        let catalogue = try Self.catalogue(
            #"{"id": "habit-streak", "title": "H", "levels": [{"title": "7", "threshold": 7}], "rule": {"kind": "streak", "challengeKind": "habit"}},"#
                + #"{"id": "this-one", "title": "T", "levels": [{"title": "done", "threshold": 1}], "rule": {"kind": "challengeCompleted", "challengeID": "\#(id.uuidString)"}}"#)
        let facts = Fact.scopes(Fact.streak, kind: .habit, challengeID: id)
        #expect(facts.map(\.scope) == ["", "kind:habit", "challenge:\(id.key)"])
        #expect(Awarding.reached(catalogue, fact: facts[1], value: 7).map(\.badgeID) == ["habit-streak"])
        #expect(Awarding.reached(catalogue, fact: facts[0], value: 7).isEmpty)
        let completed = Fact.scopes("challenges-completed", kind: .curated, challengeID: id)
        #expect(Awarding.reached(catalogue, fact: completed[2], value: 1).map(\.badgeID) == ["this-one"])
    }

    @Test("A challenge's own badges are catalogue badges about that challenge only, under ids no catalogue badge can take")
    func challengeBadges() throws {
        let id = UUID(), other = UUID()
        let own = BadgeCatalogue(challengeID: id, badges: [
            ChallengeBadge(id: "winner", title: "Water Cup winner", icon: "trophy", rule: .init(kind: .firstPlace)),
            ChallengeBadge(id: "monthly", title: "Water Cup month", rule: .init(kind: .firstPlace, window: .month)),
            ChallengeBadge(id: "five-days", title: "Five days in a row", rule: .init(kind: .streak, threshold: 5)),
            ChallengeBadge(id: "finished", title: "Water Cup finished", rule: .init(kind: .challengeCompleted)),
        ])
        let winner = "challenge:\(id.key):winner"
        #expect(own.badges.map(\.id) == [winner, "challenge:\(id.key):monthly", "challenge:\(id.key):five-days", "challenge:\(id.key):finished"])
        #expect(BadgeCatalogue.challenge(ofBadge: winner) == id)
        #expect(BadgeCatalogue.challenge(ofBadge: "chores") == nil)
        #expect(own.badge(winner)?.icon == "trophy" && own.badge("challenge:\(id.key):finished")?.icon == "medal")

        let streak = Fact.scopes(Fact.streak, kind: .competition, challengeID: id)
        #expect(Awarding.reached(own, fact: streak[2], value: 4).isEmpty)
        #expect(Awarding.reached(own, fact: streak[2], value: 5).map(\.title) == ["Five days in a row"])
        #expect(Awarding.reached(own, fact: streak[0], value: 100).isEmpty, "a streak elsewhere does not count")
        #expect(Awarding.reached(own, fact: Fact.scopes(Fact.streak, kind: .competition, challengeID: other)[2], value: 100).isEmpty)
        let completed = Fact.scopes("challenges-completed", kind: .competition, challengeID: id)
        #expect(Awarding.reached(own, fact: completed[2], value: 1).map(\.badgeID) == ["challenge:\(id.key):finished"])
        #expect(Awarding.firstPlace(own, window: .week, key: "2026-W47") == [Award(badgeID: winner, level: 1, period: "2026-W47", title: "Water Cup winner 2026-W47")])
        #expect(Awarding.firstPlace(own, window: .month, key: "2026-11").map(\.title) == ["Water Cup month 2026-11"])
        let standard = try BadgeCatalogue.standard()
        #expect(own.badges.allSatisfy { standard.badge($0.id) == nil })
    }

    @Test("A weekly challenge's badge is named by its Monday, in the user's own week; first place by its window")
    func periods() throws {
        let catalogue = try BadgeCatalogue.standard()
        // Sunday 2026-11-22 belongs to the week of Monday 2026-11-16; the next day starts another.
        #expect(Awarding.week(of: LocalDate("2026-11-22")!) == LocalDate("2026-11-16")!)
        #expect(Awarding.week(of: LocalDate("2026-11-23")!) == LocalDate("2026-11-23")!)
        let weekly = Awarding.weekly(catalogue, .weeklyChallenge, week: LocalDate("2026-11-16")!)
        #expect(weekly == [Award(badgeID: "weekly-challenge", level: 1, period: "2026-11-16", title: "Weekly Challenge 2026-11-16")])
        #expect(Awarding.weekly(catalogue, .weeklyGoal, week: LocalDate("2026-11-16")!).map(\.title) == ["Weekly goal 2026-11-16"])
        #expect(Awarding.firstPlace(catalogue, window: .week, key: "2026-W47").map(\.period) == ["2026-W47"])
        #expect(Awarding.firstPlace(catalogue, window: .month, key: "2026-11").isEmpty)
    }

    @Test("A composite is earned when every part is held, at any level; progress counts the parts held")
    func composites() throws {
        let catalogue = try BadgeCatalogue.standard()
        #expect(Awarding.composites(catalogue, held: ["chores", "streak"]).isEmpty)
        #expect(Awarding.composites(catalogue, held: ["chores", "streak", "finisher"]).map(\.badgeID) == ["all-rounder"])
        let allRounder = try #require(catalogue.badge("all-rounder"))
        #expect(Awarding.progress(of: allRounder, value: 2, heldLevels: 0).map { "\($0.current) of \($0.target)" } == "2 of 3")
    }

    @Test("Progress shows the next level: 7 of 10 after the first; nothing once every level is held")
    func progress() throws {
        let chores = try #require(try Self.catalogue(Self.chores).badge("chores"))
        #expect(Awarding.progress(of: chores, value: 0, heldLevels: 0).map { "\($0.level.title): \($0.current) of \($0.target)" } == "First: 0 of 1")
        #expect(Awarding.progress(of: chores, value: 7, heldLevels: 1).map { "\($0.level.title): \($0.current) of \($0.target)" } == "Ten: 7 of 10")
        #expect(Awarding.progress(of: chores, value: 80, heldLevels: 3) == nil)
    }
}
