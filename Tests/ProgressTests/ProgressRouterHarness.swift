import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import ProgressDomain
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ProgressService

/// Progress's router over its use cases on the progress schema of a fresh test database, on a simulated clock set to
/// Tuesday 24 November 2026, 10:00 UTC. It knows two members in Rome (`user` and `stranger`), a public habit (a walk
/// to tick, water to log, a selfie to photograph) and a household of `user` alone with a weekly chore.
struct ProgressRouterHarness: Sendable {
    static let now = Timestamp.parse("2026-11-24T10:00:00Z")!
    static let maxPhotoBytes = 64 * 1024
    /// The smallest body that passes for a PNG: its signature.
    static let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])

    let client: any TestClientProtocol
    let signer: InternalCallSigner
    /// The service's simulated clock, its use cases (the day judge among them) and its database, for tests that move
    /// time, judge and look at what was written.
    let clock: ServiceClock
    let useCases: ProgressUseCases
    let storage: ProgressStorage
    let postgres: PostgresClient
    let user = UUID()
    let stranger = UUID()
    let habitID = UUID()
    let groupID = UUID()
    let choreID = UUID()

    static func run(_ body: @escaping @Sendable (ProgressRouterHarness) async throws -> Void) async throws {
        let signer = try RouterTesting.signer()
        try await withTestDatabase(services: ["progress"]) { database in
            let logger = Logger.test("progress")
            let postgres = database.configuration(for: "progress").makeClient(schema: "progress", logger: logger)
            try await PostgresClient.withRunning(postgres) { postgres in
                try await Migrator.migrate([MessagingMigrations.set, ProgressMigrations.set], schema: "progress", client: postgres, logger: logger)
                let clock = ServiceClock(simulated: true)
                clock.set(now)
                let storage = ProgressStorage(client: postgres, outbox: Outbox(service: "progress"), logger: logger)
                let useCases = ProgressUseCases(storage: storage, clock: clock, logger: logger)
                let router = RouterTesting.router(signer: signer)
                ProgressService.addRoutes(to: router, useCases: useCases, maxPhotoBytes: maxPhotoBytes)
                try await Application(router: router).test(.router) { client in
                    let harness = ProgressRouterHarness(
                        client: client, signer: signer, clock: clock, useCases: useCases, storage: storage, postgres: postgres)
                    try await harness.seed(storage, chores: useCases.choreScheduling)
                    try await body(harness)
                }
            }
        }
    }

    /// What identity's and challenges' events would have taught progress.
    private func seed(_ storage: ProgressStorage, chores: ChoreScheduling) async throws {
        let habit = definition(
            habitID, kind: .habit, visibility: .public, groupID: nil,
            tasks: [
                ChallengeTask(taskID: "walk", title: "Walk", kind: .checkbox),
                ChallengeTask(taskID: "water", title: "Water", kind: .quantity, target: 2, unit: "litres"),
                ChallengeTask(taskID: "selfie", title: "Selfie", kind: .photo),
            ])
        let chore = definition(
            choreID, kind: .chore, visibility: .group, groupID: groupID,
            tasks: [ChallengeTask(taskID: "bins", title: "Bins", kind: .checkbox, points: 3)],
            chore: ChoreDetails(assigneeID: user, firstDueOn: LocalDate("2026-11-25")!, dueTime: nil, recurrence: ChoreRecurrence(kind: .weekly)))
        try await storage.transaction { stores in
            try await stores.projections.upsertMember(user, timeZone: "Europe/Rome")
            try await stores.projections.upsertMember(stranger, timeZone: "Europe/Rome")
            try await stores.projections.saveDefinition(habit)
            try await stores.projections.upsertGroup(groupID, name: "Home", timeZone: "Europe/Rome")
            try await stores.projections.setMembership(groupID, user, member: true)
            try await stores.projections.saveDefinition(chore)
            try await chores.sync(JudgingDefinition(chore), in: stores)
        }
    }

    private func definition(
        _ id: UUID, kind: ChallengeKind, visibility: Visibility, groupID: UUID?, tasks: [ChallengeTask], chore: ChoreDetails? = nil
    ) -> ChallengeDefinition {
        ChallengeDefinition(
            challengeID: id, version: 1, effectiveFrom: nil, kind: kind, name: "Daily", description: "", category: "health",
            difficulty: .beginner, visibility: visibility, ownerID: nil, groupID: groupID, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: tasks, rules: ChallengeRules(failure: .init(mode: .none), points: .init(kind: .perTask, pointsPerTask: 5)), chore: chore)
    }

    /// Calls `path` as the gateway would for `caller` (the user by default), with `json` as the body.
    func call(
        _ method: HTTPRequest.Method, _ path: String, as caller: UUID? = nil, json: String? = nil, body: ByteBuffer? = nil,
        contentType: String? = nil
    ) async throws -> HummingbirdTesting.TestResponse {
        let body = json.map { ByteBuffer(string: $0) } ?? body
        var headers = RouterTesting.signedHeaders(method, path, caller: caller ?? user, body: body, signer: signer)
        if let contentType = contentType ?? json.map({ _ in "application/json" }) { headers[.contentType] = contentType }
        return try await client.executeRequest(uri: path, method: method, headers: headers, body: body)
    }

    /// A started attempt at the habit.
    func startHabit(as caller: UUID? = nil) async throws -> AttemptView {
        let response = try await call(.post, "/v1/attempts", as: caller, json: #"{"challengeID": "\#(habitID)"}"#)
        try #require(response.status == .created, "\(String(buffer: response.body))")
        return try decode(AttemptResponse.self, response).attempt
    }

    func decode<Body: Decodable>(_ type: Body.Type, _ response: HummingbirdTesting.TestResponse) throws -> Body {
        try SurgeJSON.decode(Body.self, from: Data(buffer: response.body))
    }

    /// The problem document of a refusal, after checking its status and media type.
    func problem(_ response: HummingbirdTesting.TestResponse, _ status: HTTPResponse.Status, sourceLocation: SourceLocation = #_sourceLocation) throws -> Problem.Body {
        #expect(response.status == status, "\(String(buffer: response.body))", sourceLocation: sourceLocation)
        #expect(response.headers[.contentType] == "application/problem+json", sourceLocation: sourceLocation)
        return try decode(Problem.Body.self, response)
    }
}
