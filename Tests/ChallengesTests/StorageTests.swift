import Foundation
import Logging
import NIOCore
import PostgresNIO
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesDomain
@testable import ChallengesService

@Suite("Challenges storage against PostgreSQL", .tags(.integration), .kind(.integration))
struct StorageTests {
    @Test("search is ranked: \"fitness\" finds the 30-Day Fitness Challenge first")
    func searchRelevance() async throws {
        try await Harness.run { h in
            let me = try await h.user()
            _ = try await h.create(Harness.publicCompetition("Stair climbing week", description: "Climb for fitness and fun"), by: me)
            _ = try await h.create(Harness.publicCompetition("Most water this week", description: "Hydration battle"), by: me)
            let results = try await h.browse(BrowseQuery(q: "fitness"), as: me).items
            #expect(results.first?.name == "30-Day Fitness Challenge", "\(results.map(\.name))")
            #expect(results.contains { $0.name == "Stair climbing week" })
            #expect(!results.contains { $0.name == "Most water this week" })
            let relevances = results.compactMap(\.relevance)
            #expect(relevances.count == results.count)
            #expect(relevances == relevances.sorted(by: >))
            // The name weighs more than the description: a match in the name ranks a user's challenge above a
            // description-only match.
            #expect(try await h.browse(BrowseQuery(q: "meditation"), as: me).items.first?.name == "21-Day Meditation Challenge")
            #expect(try await h.browse(BrowseQuery(q: "sugar"), as: me).items.map(\.name) == ["30-Day No Sugar Challenge"])
            // Web-search syntax: exclusions, phrases and stemming ("drinking" finds "drink").
            let noGallon = try await h.browse(BrowseQuery(q: "water -gallon"), as: me).items.map(\.name)
            #expect(!noGallon.contains("75 Hard"))
            #expect(noGallon.contains("75 Soft") && noGallon.contains("30-Day Fitness Challenge"))
            #expect(Set(try await h.browse(BrowseQuery(q: "drinking"), as: me).items.map(\.name)) == ["30-Day Fitness Challenge", "30-Day No Sugar Challenge"])
            #expect(try await h.browse(BrowseQuery(q: "\"no sugar\""), as: me).items.map(\.name) == ["30-Day No Sugar Challenge"])
            #expect(try await h.browse(BrowseQuery(q: "xylophone"), as: me).items.isEmpty)
        }
    }

    @Test("filters: kind, difficulty, category and duration range, alone and together")
    func filters() async throws {
        try await Harness.run { h in
            let me = try await h.user()
            _ = try await h.create(Harness.publicCompetition("Water week"), by: me)
            func names(_ query: BrowseQuery) async throws -> Set<String> { Set(try await h.browse(query, as: me).items.map(\.name)) }
            #expect(try await names(BrowseQuery(difficulty: .extreme)) == ["75 Hard"])
            #expect(try await names(BrowseQuery(difficulty: .beginner)) == ["21-Day Meditation Challenge"])
            #expect(try await names(BrowseQuery(minDays: 25, maxDays: 35)) == ["30-Day Fitness Challenge", "30-Day No Sugar Challenge"])
            #expect(try await names(BrowseQuery(minDays: 70)) == ["75 Hard", "75 Soft"])
            #expect(try await names(BrowseQuery(maxDays: 7)) == ["Water week"])
            #expect(try await names(BrowseQuery(kind: .weekly)) == ["Weekly Push-up Challenge"])
            #expect(try await names(BrowseQuery(kind: .competition)) == ["Water week"])
            #expect(try await names(BrowseQuery(category: "mindfulness")) == ["21-Day Meditation Challenge"])
            #expect(try await names(BrowseQuery(kind: .curated, difficulty: .moderate, category: "fitness", maxDays: 40)) == ["30-Day Fitness Challenge"])
            #expect(try await names(BrowseQuery(q: "water", kind: .curated)) == ["75 Hard", "75 Soft", "30-Day Fitness Challenge"])
            #expect(try await h.browse(BrowseQuery(), as: me).items.count == CuratedContent.entries.count + 1)
        }
    }

    @Test("pagination is stable under inserts, for every sort")
    func paginationUnderInserts() async throws {
        try await Harness.run { h in
            let owner = try await h.user()
            let reader = try await h.user()
            for index in 0..<23 {
                _ = try await h.create(Harness.publicCompetition("Race \(index)", description: "laps around the park"), by: owner)
            }
            // A few likes so that the liked sort has ties and differences.
            let likers = [try await h.user(), try await h.user()]
            let all = try await h.browse(BrowseQuery(kind: .competition), as: reader).items
            for (index, item) in all.enumerated() where index % 3 == 0 {
                for liker in likers.prefix(index % 2 + 1) {
                    _ = try await h.likes.setLike(item.challengeID, liked: true, caller: liker, trace: TraceContext())
                }
            }
            for sort in [BrowseSort.newest, .liked, .trending, .relevance] {
                let query = BrowseQuery(q: sort == .relevance ? "laps park" : nil, kind: .competition, sort: sort)
                let before = try await h.browseAll(query, limit: 100, as: reader).map(\.challengeID)
                #expect(before.count >= 23, "\(sort)")
                var seen: [UUID] = []
                var cursor: String?
                var page = 0
                repeat {
                    let result = try await h.browse(query, limit: 5, after: cursor, as: reader)
                    seen += result.items.map(\.challengeID)
                    cursor = result.nextCursor
                    page += 1
                    // New challenges arrive while the reader pages: they must not shift what comes next.
                    if page <= 2 {
                        _ = try await h.create(Harness.publicCompetition("Late race \(sort) \(page)", description: "laps around the park"), by: owner)
                    }
                } while cursor != nil
                #expect(Set(seen).count == seen.count, "\(sort): an item came twice")
                let original = seen.filter(before.contains)
                #expect(original == before, "\(sort): the original items, in order, each once")
            }
        }
    }

    @Test("a cursor of another sort order is an unknown cursor (400 unknown-cursor)")
    func foreignCursor() async throws {
        try await Harness.run { h in
            let me = try await h.user()
            let page = try await h.browse(BrowseQuery(), limit: 2, as: me)
            let problem = await problem { _ = try await h.browse(BrowseQuery(sort: .liked), limit: 2, after: page.nextCursor, as: me) }
            #expect(problem?.status == .badRequest)
            #expect(problem?.type == Problem.typeBase + "unknown-cursor")
        }
    }

    @Test("a forged cursor key (huge, not finite, fractional where an integer is compared) is an unknown cursor")
    func forgedCursorKey() async throws {
        try await Harness.run { h in
            let me = try await h.user()
            let integerSorts: [BrowseSort] = [.newest, .liked, .trending]
            let forged = integerSorts.flatMap { sort in [1e300, -1e300, .nan, .infinity, 2.5].map { (sort, $0) } }
                + [(BrowseSort.relevance, Double.nan), (.relevance, .infinity)]
            for (sort, key) in forged {
                let query = BrowseQuery(q: sort == .relevance ? "fitness" : nil, sort: sort)
                let page = PageRequest(limit: 5, after: BrowsePosition(sort: sort, key: key, id: UUID()))
                let refused = await problem { _ = try await h.browsing.browse(query, page: page, caller: me) }
                #expect(refused?.status == .badRequest, "\(sort) \(key)")
                #expect(refused?.type == Problem.typeBase + "unknown-cursor", "\(sort) \(key)")
            }
            // A relevance rank is fractional by nature; browsing goes on.
            let ranked = PageRequest(limit: 5, after: BrowsePosition(sort: .relevance, key: 0.5, id: UUID()))
            _ = try await h.browsing.browse(BrowseQuery(q: "fitness"), page: ranked, caller: me)
            #expect(try await h.browse(BrowseQuery(), as: me).items.count == CuratedContent.entries.count)
        }
    }

    @Test("visibility: a private challenge and a household chore are invisible to outsiders")
    func visibility() async throws {
        try await Harness.run { h in
            let owner = try await h.user()
            let friend = try await h.user()
            let stranger = try await h.user()
            let housemate = try await h.user()
            try await h.befriend(owner, friend)
            let home = try await h.group([owner, housemate])

            let secret = try await h.create(Fixtures.competition, by: owner)
            var choreDraft = Fixtures.chore
            choreDraft.groupID = home
            choreDraft.chore?.assigneeID = housemate
            let chore = try await h.create(choreDraft, by: owner)
            let habit = try await h.create(Fixtures.habit, by: owner)
            let mine = [secret.definition.challengeID, chore.definition.challengeID, habit.definition.challengeID]

            func visible(_ caller: UUID) async throws -> Set<UUID> {
                Set(try await h.browseAll(BrowseQuery(), limit: 3, as: caller).map(\.challengeID)).intersection(mine)
            }
            #expect(try await visible(owner) == Set(mine))
            #expect(try await visible(stranger).isEmpty)
            #expect(try await visible(friend).isEmpty)
            #expect(try await visible(housemate) == [chore.definition.challengeID])
            for id in mine {
                #expect(await problem { _ = try await h.detail(id, as: stranger) }?.status == .notFound)
                #expect(await problem { _ = try await h.version(1, of: id, as: stranger) }?.status == .notFound)
                #expect(await problem { _ = try await h.likes.setLike(id, liked: true, caller: stranger, trace: TraceContext()) }?.status == .notFound)
                #expect(await problem { try await h.authoring.delete(id, confirmed: true, caller: stranger, trace: TraceContext()) }?.status == .notFound)
            }
            #expect(await problem { _ = try await h.chores(home, as: stranger) }?.status == .notFound)
            let chores = try await h.chores(home, as: housemate)
            #expect(chores.items.map(\.challengeID) == [chore.definition.challengeID])
            #expect(chores.items.first?.chore?.assigneeID == housemate)

            // Invited, the friend sees the private competition; the stranger still does not.
            let result = try await h.invitations.invite(secret.definition.challengeID, InvitationRequest(userIDs: [friend]), caller: owner, trace: TraceContext())
            #expect(result.invitations.map(\.inviteeID) == [friend])
            #expect(try await visible(friend) == [secret.definition.challengeID])
            let seen = try await h.detail(secret.definition.challengeID, as: friend)
            #expect(seen.invited)
            #expect(!seen.canEdit)
            let invitedList = try await h.mine(as: friend)
            #expect(invitedList.items.map(\.challengeID) == [secret.definition.challengeID])
            #expect(try await visible(stranger).isEmpty)

            // A housemate who leaves no longer sees the household's chores.
            try await h.leave(home, housemate)
            #expect(try await visible(housemate).isEmpty)
            #expect(await problem { _ = try await h.detail(chore.definition.challengeID, as: housemate) }?.status == .notFound)
        }
    }

    @Test("a member who leaves a group loses the invitations that came through it, and with them its group-only challenges")
    func leavingDropsGroupInvitations() async throws {
        try await Harness.run { h in
            let owner = try await h.user()
            let leaver = try await h.user()
            try await h.befriend(owner, leaver)
            let team = try await h.group([owner, leaver], kind: .team)
            var draft = Fixtures.competition
            draft.visibility = .group
            draft.groupID = team
            let groupOnly = try await h.create(draft, by: owner).definition.challengeID
            let personal = try await h.create(Fixtures.competition, by: owner).definition.challengeID
            _ = try await h.invitations.invite(groupOnly, InvitationRequest(groupID: team), caller: owner, trace: TraceContext())
            _ = try await h.invitations.invite(personal, InvitationRequest(userIDs: [leaver]), caller: owner, trace: TraceContext())
            func mine() async throws -> [UUID] {
                try await h.mine(as: leaver).items.map(\.challengeID)
            }
            #expect(try await mine() == [personal, groupOnly])

            try await h.leave(team, leaver)
            #expect(await problem { _ = try await h.detail(groupOnly, as: leaver) }?.status == .notFound)
            #expect(try await mine() == [personal])
            // An invitation sent to them in person stays.
            #expect(try await h.detail(personal, as: leaver).invited)
        }
    }

    @Test("editing creates the next version, in force from the owner's next local day; old versions stay readable")
    func versions() async throws {
        try await Harness.run { h in
            let owner = try await h.user(zone: "Europe/Rome")
            let created = try await h.create(Fixtures.habit, by: owner)
            let id = created.definition.challengeID
            let patch = ChallengePatch(
                name: "Guitar: 20 minutes",
                fields: DraftFields(tasks: [TaskDraft(taskID: "practice", title: "Practise 20 minutes", kind: .quantity, target: 20, unit: "minutes")]))
            let edited = try await h.update(id, patch, by: owner)
            #expect(edited.definition.version == 2)
            #expect(edited.definition.effectiveFrom == LocalDate("2026-03-11"))
            #expect(edited.latestVersion == 2)

            // Today (10 March in Rome) is still judged by version 1.
            let today = try await h.detail(id, as: owner)
            #expect(today.definition.version == 1)
            #expect(today.definition.name == "Guitar practice")
            #expect(today.versions.map(\.version) == [1, 2])
            #expect(today.versions.map(\.effectiveFrom) == [nil, LocalDate("2026-03-11")])
            #expect(today.latestVersion == 2)

            // Both versions stay readable, whole.
            #expect(try await h.version(1, of: id, as: owner).definition.tasks.map(\.taskID) == ["done"])
            #expect(try await h.version(2, of: id, as: owner).definition.tasks.map(\.taskID) == ["practice"])
            #expect(await problem { _ = try await h.version(3, of: id, as: owner) }?.status == .notFound)

            // At midnight in Rome version 2 takes over.
            h.clock.set(Fixtures.instant("2026-03-10T23:00:30Z"))
            #expect(try await h.detail(id, as: owner).definition.version == 2)

            // An edit that changes nothing makes no version; an empty edit is refused.
            #expect(try await h.update(id, ChallengePatch(name: "Guitar: 20 minutes"), by: owner).latestVersion == 2)
            #expect(await problem { _ = try await h.update(id, ChallengePatch(), by: owner) }?.errors?.map(\.field) == ["body"])
            // An invalid edit names the field and changes nothing.
            let invalid = await problem {
                let pink = HabitDetails(colour: "pink", notes: nil, priority: 1, reminderTime: nil)
                _ = try await h.update(id, ChallengePatch(fields: DraftFields(habit: pink)), by: owner)
            }
            #expect(invalid?.errors?.map(\.field) == ["habit.colour"])

            let changed = try await h.events(ChallengeChanged.self).filter { $0.definition.challengeID == id }
            #expect(changed.map(\.definition.version) == [2])
            #expect(changed.first?.definition.effectiveFrom == LocalDate("2026-03-11"))
            #expect(changed.first?.changedBy == owner)
            #expect(try await h.events(ChallengePublished.self).contains { $0.definition.challengeID == id && $0.definition.version == 1 })
        }
    }

    @Test("a competition edit applies from the first date begun nowhere; each participant sees the version of their own today")
    func competitionEdits() async throws {
        try await Harness.run { h in
            let owner = try await h.user(zone: "America/Los_Angeles")
            let friend = try await h.user(zone: "Pacific/Auckland")
            try await h.befriend(owner, friend)
            let id = try await h.create(Fixtures.competition, by: owner).definition.challengeID
            _ = try await h.invitations.invite(id, InvitationRequest(userIDs: [friend]), caller: owner, trace: TraceContext())
            // 12:00 UTC on 10 March: 05:00 on 10 March in Los Angeles, already 01:00 on 11 March in Auckland and
            // 02:00 on 11 March in Kiritimati. The owner's "tomorrow" (11 March) has begun for the friend.
            let edited = try await h.update(id, ChallengePatch(name: "Most water, in litres"), by: owner)
            #expect(edited.definition.effectiveFrom == LocalDate("2026-03-12"))
            #expect(try await h.events(ChallengeChanged.self).map(\.definition.effectiveFrom) == [LocalDate("2026-03-12")])
            #expect(try await h.detail(id, as: friend).definition.version == 1)
            #expect(try await h.detail(id, as: owner).definition.version == 1)
            // 11:30 UTC on 11 March: 00:30 on 12 March in Auckland, still 04:30 on 11 March in Los Angeles.
            h.clock.set(Fixtures.instant("2026-03-11T11:30:00Z"))
            #expect(try await h.detail(id, as: friend).definition.version == 2)
            #expect(try await h.detail(id, as: owner).definition.version == 1)
        }
    }

    @Test("a chore is edited by any household member and its edits follow the household's time zone")
    func choreEdits() async throws {
        try await Harness.run { h in
            let owner = try await h.user(zone: "Europe/Rome")
            let housemate = try await h.user(zone: "Europe/Rome")
            let outsider = try await h.user()
            let home = try await h.group([owner, housemate], zone: "America/New_York")
            var draft = Fixtures.chore
            draft.groupID = home
            draft.chore?.assigneeID = owner
            let chore = try await h.create(draft, by: owner)
            // 23:30 UTC: already 11 March in Rome, still 10 March in New York.
            h.clock.set(Fixtures.instant("2026-03-10T23:30:00Z"))
            var reassigned = try #require(Fixtures.chore.chore)
            reassigned.assigneeID = housemate
            let edited = try await h.update(chore.definition.challengeID, ChallengePatch(fields: DraftFields(chore: reassigned)), by: housemate)
            #expect(edited.definition.chore?.assigneeID == housemate)
            #expect(edited.definition.effectiveFrom == LocalDate("2026-03-11"))
            #expect(edited.definition.ownerID == owner)
            // Reassigning to someone outside the household is refused.
            reassigned.assigneeID = outsider
            let refused = await problem {
                _ = try await h.update(chore.definition.challengeID, ChallengePatch(fields: DraftFields(chore: reassigned)), by: owner)
            }
            #expect(refused?.errors?.map(\.field) == ["chore.assigneeID"])
            // A member who is not the owner may edit a chore but not another kind.
            let competition = try await h.create(Harness.publicCompetition("Steps"), by: owner)
            let forbidden = await problem {
                _ = try await h.update(competition.definition.challengeID, ChallengePatch(name: "Mine now"), by: housemate)
            }
            #expect(forbidden?.status == .forbidden)
        }
    }

    @Test("deleting needs confirmation and the right to; it removes the history and says so")
    func deletion() async throws {
        try await Harness.run { h in
            let owner = try await h.user()
            let other = try await h.user()
            let competition = try await h.create(Harness.publicCompetition("Steps"), by: owner)
            let id = competition.definition.challengeID
            _ = try await h.update(id, ChallengePatch(name: "Steps!"), by: owner)
            _ = try await h.likes.setLike(id, liked: true, caller: other, trace: TraceContext())

            let unconfirmed = await problem { try await h.authoring.delete(id, confirmed: false, caller: owner, trace: TraceContext()) }
            #expect(unconfirmed?.type == Problem.typeBase + "confirmation-required")
            #expect(unconfirmed?.status == .unprocessableContent)
            #expect(await problem { try await h.authoring.delete(id, confirmed: true, caller: other, trace: TraceContext()) }?.status == .forbidden)
            #expect(
                await problem { try await h.authoring.delete(CuratedContent.seventyFiveHardID, confirmed: true, caller: owner, trace: TraceContext()) }?
                    .status == .forbidden)
            #expect(try await h.count("SELECT count(*) FROM challenge_versions WHERE challenge_id = \(id)") == 2)

            try await h.authoring.delete(id, confirmed: true, caller: owner, trace: TraceContext())
            #expect(await problem { _ = try await h.detail(id, as: owner) }?.status == .notFound)
            #expect(try await h.count("SELECT count(*) FROM challenge_versions WHERE challenge_id = \(id)") == 0)
            #expect(try await h.count("SELECT count(*) FROM likes WHERE challenge_id = \(id)") == 0)
            let deleted = try await h.events(ChallengeDeleted.self)
            #expect(deleted.map(\.challengeID) == [id])
            #expect(deleted.first?.deletedBy == owner && deleted.first?.kind == .competition)
        }
    }

    @Test("invitations: friends only, or a group the inviter belongs to; one event per invitee, never twice")
    func invitations() async throws {
        try await Harness.run { h in
            let owner = try await h.user()
            let friend = try await h.user()
            let stranger = try await h.user()
            let teammates = [try await h.user(), try await h.user()]
            try await h.befriend(friend, owner)
            let team = try await h.group([owner] + teammates, kind: .friends)
            let otherTeam = try await h.group([stranger], kind: .team)
            let competition = try await h.create(Fixtures.competition, by: owner)
            let id = competition.definition.challengeID

            let refused = await problem {
                _ = try await h.invitations.invite(id, InvitationRequest(userIDs: [friend, stranger, owner]), caller: owner, trace: TraceContext())
            }
            #expect(refused?.errors?.map(\.field) == ["userIDs[1]", "userIDs[2]"])
            // A group the inviter is not in does not exist for them.
            let foreign = await problem {
                _ = try await h.invitations.invite(id, InvitationRequest(userIDs: [friend], groupID: otherTeam), caller: owner, trace: TraceContext())
            }
            #expect(foreign?.status == .notFound)
            // Inviting nobody sends nothing.
            #expect(try await h.invitations.invite(id, InvitationRequest(), caller: owner, trace: TraceContext()) == InvitationResult(invitations: [], alreadyInvited: []))

            let sent = try await h.invitations.invite(id, InvitationRequest(userIDs: [friend], groupID: team), caller: owner, trace: TraceContext())
            #expect(Set(sent.invitations.map(\.inviteeID)) == Set([friend] + teammates))
            #expect(sent.invitations.first { $0.inviteeID == friend }?.groupID == nil)
            #expect(sent.invitations.filter { $0.groupID == team }.count == 2)
            let again = try await h.invitations.invite(id, InvitationRequest(userIDs: [friend]), caller: owner, trace: TraceContext())
            #expect(again.invitations.isEmpty && again.alreadyInvited == [friend])
            let events = try await h.events(ChallengeInvitationSent.self)
            #expect(events.count == 3)
            #expect(events.allSatisfy { $0.challengeID == id && $0.inviterID == owner && $0.challengeName == "Most water this week" })

            // An invitee cannot pass a private competition on; habits are not invitable.
            try await h.befriend(friend, stranger)
            #expect(await problem { _ = try await h.invitations.invite(id, InvitationRequest(userIDs: [stranger]), caller: friend, trace: TraceContext()) }?.status == .forbidden)
            let habit = try await h.create(Fixtures.habit, by: owner)
            let notInvitable = await problem {
                _ = try await h.invitations.invite(habit.definition.challengeID, InvitationRequest(userIDs: [friend]), caller: owner, trace: TraceContext())
            }
            #expect(notInvitable?.type == Problem.typeBase + "not-invitable")
            // Anyone may invite friends to a curated challenge.
            let curated = try await h.invitations.invite(CuratedContent.seventyFiveHardID, InvitationRequest(userIDs: [stranger]), caller: friend, trace: TraceContext())
            #expect(curated.invitations.count == 1)
        }
    }

    @Test("likes count once per user, are idempotent, and feed the liked and trending sorts; old activity drops out")
    func likesAndTrending() async throws {
        try await Harness.run { h in
            let users = [try await h.user(), try await h.user(), try await h.user()]
            let fitness = CuratedContent.thirtyDayFitnessID
            for user in users { _ = try await h.likes.setLike(fitness, liked: true, caller: user, trace: TraceContext()) }
            let again = try await h.likes.setLike(fitness, liked: true, caller: users[0], trace: TraceContext())
            #expect(again == LikeState(challengeID: fitness, likes: 3, likedByMe: true))
            let taken = try await h.likes.setLike(fitness, liked: false, caller: users[2], trace: TraceContext())
            #expect(taken == LikeState(challengeID: fitness, likes: 2, likedByMe: false))
            #expect(try await h.likes.setLike(fitness, liked: false, caller: users[2], trace: TraceContext()).likes == 2)
            let liked = try await h.events(ChallengeLiked.self)
            #expect(liked.map(\.liked) == [true, true, true, false])

            let detail = try await h.detail(fitness, as: users[0])
            #expect(detail.likes == 2 && detail.likedByMe)
            #expect(try await h.browse(BrowseQuery(sort: .liked), as: users[2]).items.first?.challengeID == fitness)

            // Five joins of the meditation challenge today (progress's AttemptStarted).
            let meditation = CuratedContent.meditationID
            try await h.client.withConnection { connection in
                for _ in 0..<5 {
                    try await TrendingStore(connection: connection, logger: h.logger).record(joins: 1, challengeID: meditation, on: Trending.day(at: h.clock.now()))
                }
                try await TrendingStore(connection: connection, logger: h.logger).refresh(meditation, today: Trending.day(at: h.clock.now()))
                // A join of a challenge we do not know is ignored.
                try await TrendingStore(connection: connection, logger: h.logger).record(joins: 1, challengeID: UUID(), on: Trending.day(at: h.clock.now()))
            }
            let trending = try await h.browse(BrowseQuery(sort: .trending), as: users[0]).items
            #expect(trending.prefix(2).map(\.challengeID) == [meditation, fitness])
            #expect(trending.prefix(2).map(\.trendingScore) == [5, 2])

            // Eight days later the window has moved on.
            h.clock.set(Fixtures.instant("2026-03-18T12:00:00Z"))
            #expect(try await h.client.withConnection { try await TrendingStore(connection: $0, logger: h.logger).refreshAll(today: Trending.day(at: h.clock.now())) } == 2)
            #expect(try await h.browse(BrowseQuery(sort: .trending), as: users[0]).items.allSatisfy { $0.trendingScore == 0 })
            #expect(try await h.browse(BrowseQuery(sort: .liked), as: users[0]).items.first?.likes == 2)
        }
    }

    @Test("the curated content is seeded once; a higher content version publishes the next version")
    func seedIdempotence() async throws {
        try await Harness.run { h in
            let entries = CuratedContent.entries
            let report = try await h.seeder.seed(entries, now: h.clock.now())
            #expect(report == ContentSeeder.Report())
            #expect(try await h.count("SELECT count(*) FROM challenges") == entries.count)
            #expect(try await h.count("SELECT count(*) FROM challenge_versions") == entries.count)
            let published = try await h.events(ChallengePublished.self)
            #expect(Set(published.map(\.definition.challengeID)) == Set(entries.map(\.definition.challengeID)))
            #expect(published.count == entries.count)

            var upgraded = entries
            upgraded[0].contentVersion = 2
            upgraded[0].definition.tasks[2].details = "One US gallon (3.785 litres) of plain water, spread over the day."
            let second = try await h.seeder.seed(upgraded, now: h.clock.now())
            #expect(second.upgraded == [CuratedContent.seventyFiveHardID] && second.published.isEmpty)
            let changed = try await h.events(ChallengeChanged.self)
            #expect(changed.count == 1)
            #expect(changed.first?.definition.version == 2)
            // 12:00 UTC on 10 March is 02:00 on 11 March in Kiritimati: the upgrade applies from 12 March.
            #expect(changed.first?.definition.effectiveFrom == LocalDate("2026-03-12"))
            #expect(changed.first?.changedBy == ContentSeeder.contentAuthor)
            #expect(try await h.seeder.seed(upgraded, now: h.clock.now()) == ContentSeeder.Report())
            #expect(try await h.count("SELECT count(*) FROM challenge_versions") == entries.count + 1)
            let reader = try await h.user(zone: "Pacific/Honolulu")
            let detail = try await h.detail(CuratedContent.seventyFiveHardID, as: reader)
            #expect(detail.definition.version == 1)
            #expect(detail.latestVersion == 2)
        }
    }

    @Test("a deleted user's private definitions go with their history; shared ones stay without their id")
    func userErasure() async throws {
        try await Harness.run { h in
            let leaver = try await h.user()
            let friend = try await h.user()
            let housemate = try await h.user()
            try await h.befriend(leaver, friend)
            let home = try await h.group([leaver, housemate])
            let habit = try await h.create(Fixtures.habit, by: leaver)
            let secret = try await h.create(Fixtures.competition, by: leaver)
            _ = try await h.invitations.invite(secret.definition.challengeID, InvitationRequest(userIDs: [friend]), caller: leaver, trace: TraceContext())
            let open = try await h.create(Harness.publicCompetition("Open race"), by: leaver)
            var choreDraft = Fixtures.chore
            choreDraft.groupID = home
            choreDraft.chore?.assigneeID = leaver
            let chore = try await h.create(choreDraft, by: housemate)
            _ = try await h.likes.setLike(CuratedContent.seventyFiveHardID, liked: true, caller: leaver, trace: TraceContext())

            let outcome = try await h.client.withTransaction(logger: h.logger) { connection in
                try await UserErasure(connection: connection, outbox: h.outbox, logger: h.logger).erase(leaver, at: h.clock.now(), trace: nil)
            }
            #expect(Set(outcome.deleted) == [habit.definition.challengeID, secret.definition.challengeID])
            #expect(outcome.kept == [open.definition.challengeID])
            #expect(try await h.count("SELECT count(*) FROM challenges WHERE challenge_id = \(habit.definition.challengeID)") == 0)
            #expect(try await h.count("SELECT count(*) FROM invitations") == 0)
            #expect(Set(try await h.events(ChallengeDeleted.self).map(\.challengeID)) == Set(outcome.deleted))

            let kept = try await h.detail(open.definition.challengeID, as: friend)
            #expect(kept.definition.ownerID == nil)
            let keptChore = try await h.detail(chore.definition.challengeID, as: housemate)
            #expect(keptChore.definition.chore?.assigneeID == nil)
            #expect(keptChore.definition.ownerID == housemate)
            #expect(try await h.detail(CuratedContent.seventyFiveHardID, as: friend).likes == 0)
            #expect(try await h.count("SELECT count(*) FROM challenge_versions WHERE definition::text ILIKE \("%" + leaver.uuidString + "%")") == 0)
            #expect(try await h.count("SELECT count(*) FROM users WHERE user_id = \(leaver)") == 0)
            #expect(try await h.count("SELECT count(*) FROM friendships") == 0)
            #expect(try await h.count("SELECT count(*) FROM group_members WHERE user_id = \(leaver)") == 0)
        }
    }

    /// "Answers from an index, not a scan": with several thousand definitions and fresh statistics, the planner
    /// chooses indexes for the library's queries by itself (no `enable_seqscan = off`).
    @Test("the library's queries read indexes, not a sequential scan of the challenges table")
    func indexProof() async throws {
        try await Harness.run { h in
            try await h.client.query(
                """
                INSERT INTO challenges (challenge_id, kind, visibility, owner_id, latest_version, name, description, category,
                                        difficulty, duration_days, likes_count, trending_score, created_at, updated_at)
                SELECT gen_random_uuid(), (ARRAY['competition', 'habit', 'weekly'])[1 + i % 3],
                       (ARRAY['public', 'private', 'private', 'public'])[1 + i % 4], gen_random_uuid(), 1,
                       'Generated challenge ' || i, 'Walking, reading or cooking, number ' || i,
                       (ARRAY['outdoors', 'social', 'reading', 'cooking', 'hobbies'])[1 + i % 5],
                       (ARRAY['beginner', 'moderate', 'hard', 'extreme'])[1 + i % 4], 1 + i % 365, i % 50, i % 7,
                       now() - i * interval '1 minute', now()
                FROM generate_series(1, 5000) AS i
                """, logger: h.logger)
            try await h.client.query(
                """
                INSERT INTO challenge_versions (challenge_id, version, definition, created_at)
                SELECT challenge_id, 1, '{}'::jsonb, now() FROM challenges c
                WHERE NOT EXISTS (SELECT 1 FROM challenge_versions v WHERE v.challenge_id = c.challenge_id)
                """, logger: h.logger)
            for table in ["challenges", "challenge_versions", "invitations", "group_members", "likes"] {
                try await h.client.query(PostgresQuery(unsafeSQL: "ANALYZE \(table)"), logger: h.logger)
            }
            let caller = try await h.user()
            let lastSeq = try await h.count("SELECT max(seq) FROM challenges")
            let queries: [(String, BrowseQuery, BrowsePosition?)] = [
                ("newest", BrowseQuery(), nil),
                ("newest, a later page", BrowseQuery(), BrowsePosition(sort: .newest, key: Double(lastSeq - 40), id: UUID())),
                ("liked, a later page", BrowseQuery(sort: .liked), BrowsePosition(sort: .liked, key: 30, id: UUID())),
                ("search", BrowseQuery(q: "fitness"), nil),
                ("liked", BrowseQuery(sort: .liked), nil),
                ("trending", BrowseQuery(sort: .trending), nil),
                ("difficulty, liked", BrowseQuery(difficulty: .hard, sort: .liked), nil),
                ("kind and duration", BrowseQuery(kind: .competition, minDays: 20, maxDays: 40), nil),
                ("category", BrowseQuery(category: "cooking"), nil),
            ]
            for (name, query, position) in queries {
                let sql = try h.lists.browseQuery(query, after: position, limit: 21, caller: caller)
                let explain = PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + sql.sql, binds: sql.binds)
                let buffer = try await h.client.query(explain, logger: h.logger).collect().first?.decode(ByteBuffer.self)
                let plan = try #require(buffer.map { String(buffer: $0) }, "\(name)")
                let json = try JSONSerialization.jsonObject(with: Data(plan.utf8))
                let scans = Self.nodes(in: json).filter { ($0["Relation Name"] as? String) == "challenges" }.compactMap { $0["Node Type"] as? String }
                #expect(!scans.isEmpty, "\(name): the plan does not read challenges?\n\(plan)")
                #expect(!scans.contains("Seq Scan"), "\(name) scans the table:\n\(plan)")
            }
        }
    }

    static func nodes(in json: Any) -> [[String: Any]] {
        if let array = json as? [Any] { return array.flatMap(nodes(in:)) }
        guard let object = json as? [String: Any] else { return [] }
        var found = object["Node Type"] != nil ? [object] : []
        for value in object.values where value is [Any] || value is [String: Any] { found += nodes(in: value) }
        return found
    }
}
