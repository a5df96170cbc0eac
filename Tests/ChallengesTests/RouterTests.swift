import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesDomain
@testable import ChallengesService

/// The routes as the gateway calls them: `ChallengesService.addRoutes` over the PostgreSQL stores of a test database,
/// no broker, no server.
@Suite("Challenges: routes", .tags(.integration), .kind(.integration))
struct RouterTests {
    /// What a route answered.
    struct Answer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: Data

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try SurgeJSON.decode(type, from: body) }

        /// The problem document's type slug and the fields it names.
        var problem: (slug: String, fields: [String])? {
            guard headers[.contentType] == "application/problem+json", let problem = try? decode(Problem.Body.self) else { return nil }
            return (String(problem.type.dropFirst(Problem.typeBase.count)), problem.errors?.map(\.field) ?? [])
        }
    }

    /// Calls the router as the gateway would: signed, on behalf of `caller` (nil: no caller).
    struct Gateway {
        let client: any TestClientProtocol
        let signer: InternalCallSigner

        func send(_ method: HTTPRequest.Method, _ target: String, as caller: UUID?, body: String? = nil) async throws -> Answer {
            let body = body.map { ByteBuffer(string: $0) }
            var headers = RouterTesting.signedHeaders(method, target, caller: caller, body: body, signer: signer)
            if body != nil { headers[.contentType] = "application/json" }
            return try await client.execute(uri: target, method: method, headers: headers, body: body) { response in
                Answer(status: response.status, headers: response.headers, body: Data(buffer: response.body))
            }
        }

        func send(_ method: HTTPRequest.Method, _ target: String, as caller: UUID, json: some Encodable) async throws -> Answer {
            try await send(method, target, as: caller, body: String(decoding: try SurgeJSON.encode(json), as: UTF8.self))
        }
    }

    static func withRoutes(_ body: @Sendable (Harness, Gateway) async throws -> Void) async throws {
        let signer = try RouterTesting.signer()
        try await Harness.run { h in
            let router = RouterTesting.router(signer: signer)
            ChallengesService.addRoutes(
                to: router, storage: h.storage, lists: h.lists, export: UserExport(client: h.client, logger: h.logger), now: h.now)
            try await Application(router: router).test(.router) { client in
                try await body(h, Gateway(client: client, signer: signer))
            }
        }
    }

    @Test("browsing and my lists answer pages of summaries; a parameter that cannot be read is named; an unsigned call gets nothing")
    func lists() async throws {
        try await Self.withRoutes { h, gateway in
            let me = try await h.user()
            let first = try await gateway.send(.get, "/v1/challenges?limit=2", as: me)
            #expect(first.status == .ok)
            let page = try first.decode(Page<ChallengeSummary>.self)
            #expect(page.items.count == 2)
            let cursor = try #require(page.nextCursor)
            let next = try await gateway.send(.get, "/v1/challenges?limit=100&cursor=\(cursor)", as: me).decode(Page<ChallengeSummary>.self)
            #expect(Set(page.items.map(\.challengeID) + next.items.map(\.challengeID)) == Set(CuratedContent.entries.map(\.definition.challengeID)))
            let searched = try await gateway.send(.get, "/v1/challenges?q=meditation", as: me).decode(Page<ChallengeSummary>.self)
            #expect(searched.items.first?.name == "21-Day Meditation Challenge" && searched.items.first?.relevance != nil)

            #expect(try await gateway.send(.get, "/v1/challenges?sort=loudest&minDays=0", as: me).problem?.fields == ["minDays", "sort"])
            #expect(try await gateway.send(.get, "/v1/challenges?limit=0", as: me).problem?.fields == ["limit"])
            let unknownCursor = try await gateway.send(.get, "/v1/challenges?cursor=nonsense", as: me)
            #expect(unknownCursor.status == .badRequest && unknownCursor.problem?.slug == "unknown-cursor")

            let habit = try await h.create(Fixtures.habit, by: me)
            _ = try await h.create(Fixtures.weekly, by: me)
            let habits = try await gateway.send(.get, "/v1/me/challenges?kind=habit", as: me).decode(Page<ChallengeSummary>.self)
            #expect(habits.items.map(\.challengeID) == [habit.definition.challengeID])
            #expect(try await gateway.send(.get, "/v1/me/challenges", as: me).decode(Page<ChallengeSummary>.self).items.count == 2)
            let badKind = try await gateway.send(.get, "/v1/me/challenges?kind=dragon", as: me)
            #expect(badKind.status == .unprocessableContent && badKind.problem?.fields == ["kind"])

            #expect(try await gateway.send(.get, "/v1/challenges", as: nil).status == .unauthorized)
            let unsigned = try await gateway.client.execute(uri: "/v1/challenges", method: .get, headers: [InternalHeaders.caller: me.key]) { $0.status }
            #expect(unsigned == .unauthorized)
        }
    }

    @Test("creating answers 201, the new definition and where it lives; a broken draft is 422 naming every broken field")
    func creating() async throws {
        try await Self.withRoutes { h, gateway in
            let me = try await h.user()
            let created = try await gateway.send(.post, "/v1/challenges", as: me, json: Fixtures.habit)
            #expect(created.status == .created)
            let detail = try created.decode(ChallengeDetail.self)
            #expect(created.headers[.location] == "/v1/challenges/\(detail.definition.challengeID.key)")
            #expect(detail.definition.name == "Guitar practice" && detail.definition.ownerID == me && detail.definition.version == 1)
            #expect(detail.canEdit && !detail.ruleSummary.isEmpty)
            #expect(try await h.events(ChallengePublished.self).contains { $0.definition == detail.definition })

            let broken = try await gateway.send(.post, "/v1/challenges", as: me, body: #"{"kind": "curated", "name": " "}"#)
            #expect(broken.status == .unprocessableContent)
            #expect(broken.problem?.slug == "validation")
            let brokenFields = Set(broken.problem?.fields ?? [])
            #expect(brokenFields.isSuperset(of: ["kind", "name"]), "\(brokenFields)")
            let unknownField = try await gateway.send(.post, "/v1/challenges", as: me, body: #"{"kind": "habit", "name": "Run", "colour": "red"}"#)
            #expect(unknownField.status == .unprocessableContent && unknownField.problem?.fields == ["colour"])
            #expect(try await gateway.send(.post, "/v1/challenges", as: me, body: "{").problem?.slug == "malformed-body")
            // A group the caller does not belong to does not exist for them.
            let stranger = try await h.user()
            var chore = Fixtures.chore
            chore.groupID = try await h.group([stranger])
            #expect(try await gateway.send(.post, "/v1/challenges", as: me, json: chore).status == .notFound)
        }
    }

    @Test("reading answers today's version or the one asked for; what the caller may not see does not exist")
    func reading() async throws {
        try await Self.withRoutes { h, gateway in
            let owner = try await h.user()
            let stranger = try await h.user()
            let id = try await h.create(Fixtures.habit, by: owner).definition.challengeID
            _ = try await h.update(id, ChallengePatch(name: "Guitar: scales"), by: owner)

            let today = try await gateway.send(.get, "/v1/challenges/\(id.key)", as: owner)
            #expect(today.status == .ok)
            let detail = try today.decode(ChallengeDetail.self)
            #expect(detail.definition.version == 1 && detail.latestVersion == 2 && detail.versions.map(\.version) == [1, 2])
            let second = try await gateway.send(.get, "/v1/challenges/\(id.key)/versions/2", as: owner).decode(ChallengeDetail.self)
            #expect(second.definition.name == "Guitar: scales")

            for target in ["/v1/challenges/\(id.key)/versions/3", "/v1/challenges/\(id.key)/versions/0", "/v1/challenges/not-an-id"] {
                let missing = try await gateway.send(.get, target, as: owner)
                #expect(missing.status == .notFound && missing.problem?.slug == "not-found", "\(target)")
            }
            #expect(try await gateway.send(.get, "/v1/challenges/\(id.key)", as: stranger).status == .notFound)
            #expect(try await gateway.send(.get, "/v1/challenges/\(id.key)/versions/1", as: stranger).status == .notFound)
        }
    }

    @Test("editing makes the next version and deleting needs confirmation, both for those allowed to")
    func editingAndDeleting() async throws {
        try await Self.withRoutes { h, gateway in
            let owner = try await h.user()
            let other = try await h.user()
            let habit = try await h.create(Fixtures.habit, by: owner).definition.challengeID
            let race = try await h.create(Harness.publicCompetition("Steps"), by: owner).definition.challengeID

            let edited = try await gateway.send(.patch, "/v1/challenges/\(habit.key)", as: owner, body: #"{"name": "Guitar, daily"}"#)
            #expect(edited.status == .ok)
            #expect(try edited.decode(ChallengeDetail.self).latestVersion == 2)
            #expect(try await gateway.send(.patch, "/v1/challenges/\(habit.key)", as: owner, body: "{}").problem?.fields == ["body"])
            // The kind never changes: an edit does not know the field.
            #expect(try await gateway.send(.patch, "/v1/challenges/\(habit.key)", as: owner, body: #"{"kind": "chore"}"#).problem?.fields == ["kind"])
            let badColour = try await gateway.send(.patch, "/v1/challenges/\(habit.key)", as: owner, body: #"{"habit": {"colour": "pink"}}"#)
            #expect(badColour.status == .unprocessableContent && badColour.problem?.fields == ["habit.colour"])
            #expect(try await gateway.send(.patch, "/v1/challenges/\(habit.key)", as: other, body: #"{"name": "Mine"}"#).status == .notFound)
            let forbidden = try await gateway.send(.patch, "/v1/challenges/\(race.key)", as: other, body: #"{"name": "Mine"}"#)
            #expect(forbidden.status == .forbidden && forbidden.problem?.slug == "forbidden")

            let unconfirmed = try await gateway.send(.delete, "/v1/challenges/\(race.key)", as: owner)
            #expect(unconfirmed.status == .unprocessableContent && unconfirmed.problem?.slug == "confirmation-required")
            #expect(try await gateway.send(.delete, "/v1/challenges/\(race.key)?confirm=yes", as: owner).problem?.fields == ["confirm"])
            #expect(try await gateway.send(.delete, "/v1/challenges/\(race.key)?confirm=true", as: other).status == .forbidden)
            let curated = "/v1/challenges/\(CuratedContent.seventyFiveHardID.key)?confirm=true"
            #expect(try await gateway.send(.delete, curated, as: owner).status == .forbidden)
            #expect(try await gateway.send(.delete, "/v1/challenges/\(race.key)?confirm=true", as: owner).status == .noContent)
            #expect(try await gateway.send(.get, "/v1/challenges/\(race.key)", as: owner).status == .notFound)
            #expect(try await h.events(ChallengeDeleted.self).map(\.challengeID) == [race])
        }
    }

    @Test("inviting friends answers 201 with the invitations; liking is idempotent; neither reaches what the caller cannot see")
    func invitingAndLiking() async throws {
        try await Self.withRoutes { h, gateway in
            let owner = try await h.user()
            let friend = try await h.user()
            let stranger = try await h.user()
            try await h.befriend(owner, friend)
            let race = try await h.create(Fixtures.competition, by: owner).definition.challengeID
            let habit = try await h.create(Fixtures.habit, by: owner).definition.challengeID
            let invitations = "/v1/challenges/\(race.key)/invitations"

            let sent = try await gateway.send(.post, invitations, as: owner, json: InvitationRequest(userIDs: [friend]))
            #expect(sent.status == .created)
            #expect(try sent.decode(InvitationResult.self).invitations.map(\.inviteeID) == [friend])
            let again = try await gateway.send(.post, invitations, as: owner, json: InvitationRequest(userIDs: [friend]))
            #expect(try again.decode(InvitationResult.self) == InvitationResult(invitations: [], alreadyInvited: [friend]))
            let notFriends = try await gateway.send(.post, invitations, as: owner, json: InvitationRequest(userIDs: [stranger]))
            #expect(notFriends.status == .unprocessableContent && notFriends.problem?.fields == ["userIDs[0]"])
            let notInvitable = try await gateway.send(.post, "/v1/challenges/\(habit.key)/invitations", as: owner, json: InvitationRequest(userIDs: [friend]))
            #expect(notInvitable.status == .conflict && notInvitable.problem?.slug == "not-invitable")
            #expect(try await gateway.send(.post, invitations, as: stranger, json: InvitationRequest(userIDs: [owner])).status == .notFound)

            let like = "/v1/challenges/\(race.key)/like"
            #expect(try await gateway.send(.put, like, as: friend).decode(LikeState.self) == LikeState(challengeID: race, likes: 1, likedByMe: true))
            #expect(try await gateway.send(.put, like, as: friend).decode(LikeState.self).likes == 1)
            #expect(try await gateway.send(.delete, like, as: friend).decode(LikeState.self) == LikeState(challengeID: race, likes: 0, likedByMe: false))
            #expect(try await gateway.send(.put, like, as: stranger).status == .notFound)
            #expect(try await gateway.send(.put, "/v1/challenges/\(UUID().key)/like", as: friend).problem?.slug == "not-found")
        }
    }

    @Test("a household's chores are for its members; the export holds what the caller owns")
    func choresAndExport() async throws {
        try await Self.withRoutes { h, gateway in
            let owner = try await h.user()
            let housemate = try await h.user()
            let stranger = try await h.user()
            let home = try await h.group([owner, housemate])
            var draft = Fixtures.chore
            draft.groupID = home
            draft.chore?.assigneeID = housemate
            let chore = try await h.create(draft, by: owner).definition.challengeID

            let chores = try await gateway.send(.get, "/v1/groups/\(home.key)/chores", as: housemate)
            #expect(chores.status == .ok)
            #expect(try chores.decode(Page<ChallengeSummary>.self).items.map(\.challengeID) == [chore])
            #expect(try await gateway.send(.get, "/v1/groups/\(home.key)/chores", as: stranger).status == .notFound)
            #expect(try await gateway.send(.get, "/v1/groups/\(home.key)/chores?limit=500", as: housemate).problem?.fields == ["limit"])

            let export = try await gateway.send(.get, "/internal/export", as: owner)
            #expect(export.status == .ok && export.headers[.contentType] == "application/json")
            let object = try #require(try JSONSerialization.jsonObject(with: export.body) as? [String: Any])
            let owned = try #require(object["owned"] as? [[String: Any]])
            #expect(owned.map { $0["challengeID"] as? String } == [chore.key])
            #expect(try await gateway.send(.get, "/internal/export", as: nil).status == .unauthorized)
        }
    }
}
