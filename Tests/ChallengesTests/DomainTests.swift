import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesDomain
@testable import ChallengesService

@Suite("Versions and effective dates", .tags(.unit), .kind(.unit))
struct VersionTests {
    let rome = TimeZone(identifier: "Europe/Rome")!
    let newYork = TimeZone(identifier: "America/New_York")!

    @Test("an edit applies from the next local day of the owner or group")
    func nextLocalDay() {
        // 23:30 UTC on 10 March is already 00:30 on 11 March in Rome, still 19:30 on 10 March in New York.
        let instant = Fixtures.instant("2026-03-10T23:30:00Z")
        #expect(VersionSchedule.effectiveFrom(editedAt: instant, in: rome) == LocalDate("2026-03-12"))
        #expect(VersionSchedule.effectiveFrom(editedAt: instant, in: newYork) == LocalDate("2026-03-11"))
        // Across the end of a month and a year.
        #expect(VersionSchedule.effectiveFrom(editedAt: Fixtures.instant("2026-12-31T12:00:00Z"), in: rome) == LocalDate("2027-01-01"))
        // On the day clocks change (Rome springs forward on 29 March 2026).
        #expect(VersionSchedule.effectiveFrom(editedAt: Fixtures.instant("2026-03-29T21:59:00Z"), in: rome) == LocalDate("2026-03-30"))
        #expect(VersionSchedule.effectiveFrom(editedAt: Fixtures.instant("2026-03-29T22:00:00Z"), in: rome) == LocalDate("2026-03-31"))
    }

    @Test("a content upgrade applies from the first date that has not begun anywhere")
    func contentUpgrade() {
        // 09:00 UTC is 23:00 in Kiritimati (UTC+14): 11 March has not begun anywhere yet.
        #expect(VersionSchedule.contentEffectiveFrom(at: Fixtures.instant("2026-03-10T09:00:00Z")) == LocalDate("2026-03-11"))
        // 11:00 UTC is 01:00 on 11 March in Kiritimati: the next untouched date is 12 March.
        #expect(VersionSchedule.contentEffectiveFrom(at: Fixtures.instant("2026-03-10T11:00:00Z")) == LocalDate("2026-03-12"))
    }

    @Test("the version in force on a day is the latest whose date has come; version 1 from the start")
    func versionInForce() {
        let versions = [
            VersionSummary(version: 1, effectiveFrom: nil, createdAt: Date()),
            VersionSummary(version: 2, effectiveFrom: LocalDate("2026-03-12"), createdAt: Date()),
            VersionSummary(version: 3, effectiveFrom: LocalDate("2026-03-12"), createdAt: Date()),
            VersionSummary(version: 4, effectiveFrom: LocalDate("2026-04-01"), createdAt: Date()),
        ]
        #expect(VersionSchedule.versionInForce(on: LocalDate("2020-01-01")!, among: versions) == 1)
        #expect(VersionSchedule.versionInForce(on: LocalDate("2026-03-11")!, among: versions) == 1)
        #expect(VersionSchedule.versionInForce(on: LocalDate("2026-03-12")!, among: versions) == 3)
        #expect(VersionSchedule.versionInForce(on: LocalDate("2026-03-31")!, among: versions) == 3)
        #expect(VersionSchedule.versionInForce(on: LocalDate("2026-04-01")!, among: versions) == 4)
        #expect(VersionSchedule.versionInForce(on: LocalDate("2026-04-01")!, among: []) == nil)
    }

    @Test("a definition turns back into the draft that builds it, for every kind")
    func draftRoundTrip() throws {
        let cases: [(ChallengeDraft, DraftContext)] = [
            (Fixtures.competition, Fixtures.user), (Fixtures.habit, Fixtures.user), (Fixtures.chore, Fixtures.member),
            (Fixtures.weekly, Fixtures.user),
        ]
        for (draft, context) in cases {
            let id = UUID()
            let definition = try draft.build(challengeID: id, version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: context)
            let again = ChallengeDraft(definition).definition(challengeID: id, version: 1, effectiveFrom: nil, ownerID: Fixtures.caller)
            #expect(again == definition, "\(draft.kind)")
        }
    }

    @Test("an edit replaces the fields it names and keeps the rest; rule parts merge")
    func patch() throws {
        let base = try Fixtures.habit.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        let patch = ChallengePatch(
            name: "Guitar: 20 minutes",
            fields: DraftFields(
                tasks: [TaskDraft(taskID: "practice", title: "Practise", kind: .quantity, target: 20, unit: "minutes")],
                rules: RulesDraft(streak: StreakRule(period: .day, freezesPerMonth: 2))))
        let edited = patch.applied(to: ChallengeDraft(base)).definition(
            challengeID: base.challengeID, version: 2, effectiveFrom: LocalDate("2026-03-12"), ownerID: base.ownerID)
        #expect(edited.name == "Guitar: 20 minutes")
        #expect(edited.description == base.description)
        #expect(edited.habit == base.habit)
        #expect(edited.tasks.map(\.taskID) == ["practice"])
        #expect(edited.rules.streak.freezesPerMonth == 2)
        #expect(edited.rules.failure == base.rules.failure)
        #expect(edited.rules.checkInGraceMinutes == base.rules.checkInGraceMinutes)
        #expect(!edited.hasSameContent(as: base))
        #expect(ChallengePatch(name: base.name).applied(to: ChallengeDraft(base))
            .definition(challengeID: base.challengeID, version: 2, effectiveFrom: nil, ownerID: base.ownerID).hasSameContent(as: base))
        #expect(ChallengePatch().isEmpty)
        #expect(!patch.changesMembership)
        #expect(ChallengePatch(fields: DraftFields(chore: Fixtures.chore.chore)).changesMembership)
    }

    @Test("an edit away from group visibility drops the group; one to group visibility takes the group named")
    func visibilityAwayFromGroup() {
        let team = UUID()
        var grouped = Fixtures.competition
        grouped.visibility = .group
        grouped.groupID = team
        let opened = ChallengePatch(fields: DraftFields(visibility: .public)).applied(to: grouped)
        #expect(opened.visibility == .public)
        #expect(opened.groupID == nil)
        #expect(ChallengePatch(name: "Renamed").applied(to: grouped).groupID == team)
        let other = UUID()
        let moved = ChallengePatch(fields: DraftFields(visibility: .group, groupID: other)).applied(to: Fixtures.competition)
        #expect(moved.visibility == .group)
        #expect(moved.groupID == other)
    }
}

@Suite("Rule descriptions", .tags(.unit), .kind(.unit))
struct RuleDescriptionTests {
    @Test("75 Hard: restart at day 1, one failure condition per task, judged at midnight")
    func seventyFiveHard() {
        let definition = CuratedContent.seventyFiveHard
        let summary = RuleDescription.summary(definition)
        #expect(summary.hasPrefix("Miss any task and the challenge restarts at day 1."))
        #expect(summary.contains("It lasts 75 days."))
        #expect(summary.contains("Each day is judged at local midnight."))
        #expect(summary.contains("Each completed task earns 10 points."))
        let conditions = RuleDescription.failureConditions(definition)
        #expect(conditions.count == 6)
        #expect(conditions.contains("Logging less than 3.8 litres for “Drink a gallon of water” on any day restarts the challenge at day 1."))
        #expect(conditions.contains("No photo for “Take a progress photo” on any day restarts the challenge at day 1."))
        #expect(conditions.contains("Not completing “Two 45-minute workouts” on any day restarts the challenge at day 1."))
        #expect(conditions.last == "A day is judged at local midnight: a check-in after that does not count.")
    }

    @Test("tolerant, none, weekly streaks, freezes, series points, bonuses and grace are described")
    func others() throws {
        let soft = RuleDescription.summary(CuratedContent.seventyFiveSoft)
        #expect(soft.hasPrefix("You may miss up to 7 days; one more and the attempt fails."))
        #expect(soft.contains("One streak freeze a month keeps the streak through a missed day."))
        #expect(soft.contains("Check-ins for a day are accepted until 2 hours after it ends."))
        #expect(RuleDescription.failureConditions(CuratedContent.seventyFiveSoft).contains("Missing more than 7 days fails the attempt."))

        let pushUps = RuleDescription.summary(CuratedContent.dailyPushUps)
        #expect(pushUps.hasPrefix("It never fails: a missed day only breaks the streak."))
        #expect(pushUps.contains("It is open-ended."))
        #expect(pushUps.contains("any activity in a week keeps it"))
        #expect(pushUps.contains("10 × (reps × 0.3 + series number × 0.8) × the streak multiplier"))
        #expect(pushUps.contains("The week's goal is 5 days' worth of each daily task."))
        #expect(pushUps.contains("Reaching the weekly goal (5 days' worth of each daily task) earns 500 bonus points."))
        #expect(RuleDescription.failureConditions(CuratedContent.dailyPushUps).isEmpty)

        #expect(RuleDescription.summary(CuratedContent.weeklyPushUps).contains("Completing it earns 200 bonus points."))
        #expect(RuleDescription.shortfall(CuratedContent.weeklyPushUps.tasks[0]) == "Logging less than 7 × your daily goal for “Push-ups this week” in any week")

        let chore = try Fixtures.chore.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.member)
        let choreSummary = RuleDescription.summary(chore)
        #expect(choreSummary.hasPrefix("A chore never fails"))
        #expect(choreSummary.contains("Doing it earns 3 points."))
        #expect(!choreSummary.contains("open-ended"))
        #expect(RuleDescription.cadenceText(chore.tasks[0].cadence) == "on any of its days (Mon, Thu)")

        let competition = try Fixtures.competition.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: nil, context: Fixtures.user)
        #expect(RuleDescription.summary(competition).hasPrefix("A competition never fails: the ranking is by total when time is up."))
        #expect(RuleDescription.cadenceText(Cadence(kind: .timesPerWeek, timesPerWeek: 6)) == "on 6 days of any week")
    }

    @Test("time off is described when the rules state it, and not otherwise")
    func pauses() throws {
        #expect(!RuleDescription.summary(CuratedContent.seventyFiveHard).contains("paused"))
        var habit = try Fixtures.habit.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user)
        habit.rules.pause = PauseRule(mode: .pausesStreak, maxDaysPerPause: 14, pausesPerMonth: 1, restWeekdays: [.sunday, .saturday], skipDaysPerMonth: 2)
        let summary = RuleDescription.summary(habit)
        #expect(summary.contains("It can be paused (up to 14 days at a time, 1 pause a month): paused days neither extend nor break the streak."))
        #expect(summary.contains("Rest days: Saturday, Sunday."))
        #expect(summary.contains("2 skip days a month, spent on the day itself."))
        habit.rules.pause = .notAllowed
        #expect(RuleDescription.summary(habit).contains("It cannot be paused: every day counts."))
    }

    @Test("numbers print whole when they are whole, and any number prints")
    func numbers() {
        #expect(RuleDescription.number(10) == "10")
        #expect(RuleDescription.number(3.8) == "3.8")
        #expect(RuleDescription.number(1e300) == "1e+300")
        #expect(RuleDescription.number(.infinity) == "inf")
    }
}

@Suite("Curated content", .tags(.unit), .kind(.unit))
struct ContentTests {
    @Test("every curated definition validates as content and survives the draft round trip")
    func everyEntryValidates() {
        for entry in CuratedContent.entries {
            #expect(ChallengeDraft(entry.definition).validate(.content).isEmpty, "\(entry.definition.name): \(ChallengeDraft(entry.definition).validate(.content))")
            let rebuilt = ChallengeDraft(entry.definition).definition(
                challengeID: entry.definition.challengeID, version: 1, effectiveFrom: nil, ownerID: nil)
            #expect(rebuilt == entry.definition, "\(entry.definition.name)")
            #expect(entry.definition.visibility == .curated)
            #expect(entry.definition.ownerID == nil)
            #expect(entry.definition.version == 1)
            #expect(entry.definition.estimatedDailyMinutes != nil)
            #expect(entry.contentVersion >= 1)
        }
        #expect(Set(CuratedContent.entries.map(\.definition.challengeID)).count == CuratedContent.entries.count)
    }

    @Test("the five library challenges of 000 with their durations and difficulties")
    func library() {
        let library = Dictionary(uniqueKeysWithValues: CuratedContent.entries.map { ($0.definition.name, $0.definition) })
        let expected: [(String, Int, Difficulty)] = [
            ("75 Hard", 75, .extreme), ("75 Soft", 75, .moderate), ("30-Day Fitness Challenge", 30, .moderate),
            ("21-Day Meditation Challenge", 21, .beginner), ("30-Day No Sugar Challenge", 30, .moderate),
        ]
        for (name, days, difficulty) in expected {
            let definition = library[name]
            #expect(definition?.kind == .curated, "\(name)")
            #expect(definition?.durationDays == days, "\(name)")
            #expect(definition?.difficulty == difficulty, "\(name)")
            #expect(definition?.description.isEmpty == false, "\(name)")
        }
    }

    @Test("75 Hard has exactly its five daily tasks and restarts at day 1 on any miss")
    func seventyFiveHard() {
        let hard = CuratedContent.seventyFiveHard
        #expect(hard.tasks.count == 5)
        #expect(hard.tasks.allSatisfy { $0.cadence == .daily })
        #expect(Set(hard.tasks.map(\.taskID)) == ["workouts", "diet", "water", "reading", "progress-photo"])
        let water = hard.tasks.first { $0.taskID == "water" }
        #expect(water?.kind == .quantity && water?.target == 3.8 && water?.unit == "litres")
        let reading = hard.tasks.first { $0.taskID == "reading" }
        #expect(reading?.target == 10 && reading?.unit == "pages")
        #expect(hard.tasks.first { $0.taskID == "progress-photo" }?.kind == .photo)
        #expect(hard.tasks.first { $0.taskID == "workouts" }?.details?.contains("outdoors") == true)
        #expect(hard.tasks.first { $0.taskID == "diet" }?.details?.contains("alcohol") == true)
        #expect(hard.rules.failure == FailureRule(mode: .strict))
        #expect(hard.rules.checkInGraceMinutes == 0)
        #expect(hard.rules.streak.freezesPerMonth == 0)
    }

    @Test("the push-up system definitions carry 001's formula, cap bands, weekly rules and bonuses")
    func pushUps() {
        let daily = CuratedContent.dailyPushUps
        #expect(daily.durationDays == nil)
        let series = daily.rules.points.series
        #expect(series?.basePoints == 10 && series?.repMultiplier == 0.3 && series?.seriesMultiplier == 0.8)
        #expect(series?.streakMultipliers.first == StreakMultiplier(fromStreak: 0, multiplier: 1.0))
        #expect(
            series?.capBands == [
                CapBand(fromLevel: 1, multiplierOfDailyGoal: 1.5), CapBand(fromLevel: 4, multiplierOfDailyGoal: 2.0),
                CapBand(fromLevel: 5, multiplierOfDailyGoal: 2.5),
            ])
        #expect(daily.rules.streak == StreakRule(period: .week, freezesPerMonth: 1, activityKeepsWeeklyStreak: true, weeklyGoalDays: 5))
        #expect(daily.rules.points.weeklyGoalBonus == 500)
        #expect(daily.tasks.count == 1 && daily.tasks[0].unit == "push-ups" && daily.tasks[0].targetFromDailyGoal == 1)

        let weekly = CuratedContent.weeklyPushUps
        #expect(weekly.kind == .weekly)
        #expect(weekly.durationDays == nil)
        #expect(weekly.tasks.count == 1)
        #expect(weekly.tasks[0].kind == .quantity && weekly.tasks[0].unit == "push-ups" && weekly.tasks[0].targetFromDailyGoal == 7)
        #expect(weekly.tasks[0].cadence == Cadence(kind: .weekly))
        #expect(weekly.rules.points.completionBonus == 200)
    }
}

@Suite("Access policy", .tags(.unit), .kind(.unit))
struct AccessPolicyTests {
    func facts(
        _ kind: ChallengeKind, _ visibility: Visibility, owner: Bool = false, invited: Bool = false, member: Bool = false
    ) -> AccessFacts {
        AccessFacts(kind: kind, visibility: visibility, isOwner: owner, isInvited: invited, isGroupMember: member)
    }

    @Test("who sees what")
    func seeing() {
        #expect(AccessPolicy.canSee(facts(.curated, .curated)))
        #expect(AccessPolicy.canSee(facts(.competition, .public)))
        #expect(!AccessPolicy.canSee(facts(.competition, .private)))
        #expect(AccessPolicy.canSee(facts(.competition, .private, owner: true)))
        #expect(AccessPolicy.canSee(facts(.competition, .private, invited: true)))
        #expect(!AccessPolicy.canSee(facts(.competition, .private, member: true)))
        #expect(!AccessPolicy.canSee(facts(.chore, .group)))
        #expect(!AccessPolicy.canSee(facts(.chore, .group, owner: true)))
        #expect(AccessPolicy.canSee(facts(.chore, .group, member: true)))
        #expect(AccessPolicy.canSee(facts(.competition, .group, invited: true)))
    }

    @Test("who edits, deletes and invites")
    func acting() {
        #expect(!AccessPolicy.canEdit(facts(.curated, .curated)))
        #expect(!AccessPolicy.canEdit(facts(.weekly, .curated)))
        #expect(AccessPolicy.canEdit(facts(.competition, .public, owner: true)))
        #expect(!AccessPolicy.canEdit(facts(.competition, .public)))
        #expect(!AccessPolicy.canEdit(facts(.competition, .private, invited: true)))
        #expect(AccessPolicy.canEdit(facts(.chore, .group, member: true)))
        #expect(!AccessPolicy.canDelete(facts(.chore, .group, owner: true)))
        #expect(AccessPolicy.canDelete(facts(.habit, .private, owner: true)))
        #expect(AccessPolicy.canInvite(facts(.curated, .curated)))
        #expect(AccessPolicy.canInvite(facts(.competition, .public)))
        #expect(AccessPolicy.canInvite(facts(.competition, .private, owner: true)))
        #expect(!AccessPolicy.canInvite(facts(.competition, .private, invited: true)))
        #expect(!AccessPolicy.canInvite(facts(.habit, .private, owner: true)))
        #expect(!AccessPolicy.canInvite(facts(.chore, .group, member: true)))
    }
}

@Suite("Browse query parameters", .tags(.unit), .kind(.unit))
struct BrowseQueryTests {
    /// The query the controller reads, its domain error mapped as the API edge maps it.
    static func parsed(_ parameters: [String: String]) throws -> BrowseQuery {
        do {
            return try BrowseQuery(parameters: parameters)
        } catch {
            throw error.problem
        }
    }

    @Test("a NUL character in any parameter is a 400 naming it, before it can reach SQL")
    func nulCharacters() throws {
        let parameters = ["q": "yoga\u{0}", "category": "fit\u{0}ness", "sort": "liked"]
        #expect(throws: ChallengesError.nulCharacters(FieldError.nulCharacters(in: parameters))) { try BrowseQuery(parameters: parameters) }
        let problem = try #require(throws: Problem.self) { try Self.parsed(parameters) }
        #expect(problem.status == .badRequest)
        #expect(problem.type == Problem.typeBase + "invalid-characters")
        #expect(problem.errors?.map(\.field) == ["category", "q"])
        #expect(problem.errors?.allSatisfy { $0.message == "must not contain NUL characters" } == true)
    }

    @Test("defaults: newest, or relevance when searching")
    func defaults() throws {
        #expect(try BrowseQuery(parameters: [:]).sort == .newest)
        #expect(try BrowseQuery(parameters: ["q": "fitness"]).sort == .relevance)
        #expect(try BrowseQuery(parameters: ["q": "fitness", "sort": "liked"]).sort == .liked)
        let query = try BrowseQuery(parameters: [
            "kind": "curated", "difficulty": "hard", "category": "Fitness", "minDays": "21", "maxDays": "30", "q": "  ",
        ])
        #expect(query == BrowseQuery(kind: .curated, difficulty: .hard, category: "fitness", minDays: 21, maxDays: 30))
    }

    @Test("every malformed parameter is named")
    func malformed() throws {
        let problem = try #require(throws: Problem.self) {
            _ = try Self.parsed([
                "kind": "party", "difficulty": "easy", "minDays": "zero", "maxDays": "400", "sort": "random",
                "q": String(repeating: "a", count: 201),
            ])
        }
        #expect(problem.status == .unprocessableContent)
        #expect(problem.type == Problem.typeBase + "validation")
        #expect(Set(problem.errors?.map(\.field) ?? []) == ["kind", "difficulty", "minDays", "maxDays", "sort", "q"])
        // minDays above maxDays is a filter nothing matches, not a malformed one.
        #expect(try BrowseQuery(parameters: ["minDays": "30", "maxDays": "7"]) == BrowseQuery(minDays: 30, maxDays: 7))
        // Relevance without a search: nothing to be relevant to, so the default order.
        #expect(try Self.parsed(["sort": "relevance"]).sort == .newest)
    }
}

@Suite("Challenges' own JSON", .tags(.unit), .kind(.unit))
struct OwnJSONTests {
    static var versions: [ChallengeVersion] {
        get throws {
            let drafts = [Fixtures.competition, Fixtures.habit, Fixtures.weekly]
            let built = try drafts.map { try $0.build(challengeID: UUID(), version: 1, effectiveFrom: nil, ownerID: Fixtures.caller, context: Fixtures.user) }
            let chore = try Fixtures.chore.build(challengeID: UUID(), version: 3, effectiveFrom: LocalDate("2026-06-02"), ownerID: nil, context: Fixtures.member)
            return CuratedContent.entries.map(\.definition) + built + [chore]
        }
    }

    @Test("a stored version is, byte for byte, the definition the events publish; rows written before read back the same")
    func storedIsPublished() throws {
        for version in try Self.versions {
            let published = try SurgeJSON.encode(ChallengeDefinition(version))
            #expect(try SurgeJSON.encode(version) == published, "\(version.name)")
            #expect(try SurgeJSON.decode(ChallengeVersion.self, from: published) == version, "\(version.name)")
        }
    }

    @Test("a draft and an edit are one JSON object each, their fields beside the kind and the name")
    func flatDraftsAndEdits() throws {
        for draft in [Fixtures.competition, Fixtures.habit, Fixtures.chore, Fixtures.weekly, Fixtures.curated()] {
            let json = try SurgeJSON.encode(draft)
            #expect(try SurgeJSON.decode(ChallengeDraft.self, from: json) == draft)
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(object["fields"] == nil)
            #expect(object["kind"] as? String == draft.kind.rawValue && object["name"] as? String == draft.name)
        }
        let patch = ChallengePatch(name: "Renamed", fields: DraftFields(visibility: .public, badges: []))
        let json = try SurgeJSON.encode(patch)
        #expect(String(decoding: json, as: UTF8.self) == #"{"badges":[],"name":"Renamed","visibility":"public"}"#)
        #expect(try SurgeJSON.decode(ChallengePatch.self, from: json) == patch)
        #expect(try SurgeJSON.decode(ChallengePatch.self, from: Data("{}".utf8)).isEmpty)
    }
}
