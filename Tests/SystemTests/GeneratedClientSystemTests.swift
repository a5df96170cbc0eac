import AsyncHTTPClient
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SurgeGeneratedClient
import SurgeTestSupport
import Testing

/// The API as an app team generating a client from docs/openapi.json sees it: swift-openapi-generator's code
/// (Tests/GeneratedClient) with the runtime's default configuration, whose date transcoder reads ISO 8601 without
/// fractional seconds, against services running as processes behind the gateway.
@Suite("Generated client: a new user's first minute through swift-openapi-generator's code", .tags(.system), .kind(.system), .serialized)
struct GeneratedClientSystemTests {
    /// Adds the access token, as an app's middleware would.
    struct BearerToken: ClientMiddleware {
        let token: String

        func intercept(
            _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
            next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
        ) async throws -> (HTTPResponse, HTTPBody?) {
            var request = request
            request.headerFields[.authorization] = "Bearer \(token)"
            return try await next(request, body, baseURL)
        }
    }

    static func client(_ gateway: URL, token: String? = nil) -> Client {
        Client(serverURL: gateway, transport: AsyncHTTPClientTransport(), middlewares: token.map { [BearerToken(token: $0)] } ?? [])
    }

    @Test("sign up, start 75 Hard, tick a task, log an amount, read the attempt back, upload a photo and download it")
    func firstMinute() async throws {
        try await ProgressStage.with("generated-client") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            let gateway = try #require(URL(string: try stage.stack.process("gateway").baseURL))

            // Sign up: every instant in the answer decodes with the default transcoder, or this throws.
            let email = "sam-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let signedUp = try await Self.client(gateway).register(
                body: .json(.init(displayName: "Sam", email: email, password: "correct horse battery", timeZone: "Europe/Rome"))
            ).created.body.json
            #expect(signedUp.user.id == signedUp.user.id.lowercased())
            #expect(signedUp.tokens.accessTokenExpiresAt > signedUp.user.createdAt)
            let sam = Self.client(gateway, token: signedUp.tokens.accessToken)
            let me = try await sam.getMe().ok.body.json
            #expect(me.user.id == signedUp.user.id)

            let started = try await sam.startAttempt(body: .json(.init(challengeID: Fixtures.seventyFiveHard))).created.body.json.attempt
            #expect(started.challengeID == Fixtures.seventyFiveHard)
            #expect(started.attemptID == started.attemptID.lowercased())

            let ticked = try await sam.setTaskDone(path: .init(attemptID: started.attemptID, taskID: "workouts"), body: .json(.init(done: true)))
                .ok.body.json.attempt
            let logged = try await sam.logQuantity(path: .init(attemptID: started.attemptID, taskID: "water"), body: .json(.init(quantity: 1.5)))
                .created.body.json.attempt
            let read = try await sam.getAttempt(path: .init(attemptID: started.attemptID)).ok.body.json.attempt
            // One named schema: the four answers are values of one Swift type, or this array does not compile.
            let attempts = [started, ticked, logged, read]
            #expect(Set(attempts.map(\.attemptID)) == [started.attemptID])
            #expect(read == logged)
            #expect(read.today?.remainingTaskIDs.contains("workouts") == false)
            #expect(read.today?.remainingTaskIDs.contains("water") == true)

            let photo = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 9, count: 200))
            let attached = try await sam.attachPhoto(
                path: .init(attemptID: started.attemptID, taskID: "progress-photo"), body: .jpeg(HTTPBody(photo))
            ).ok.body.json
            #expect(attached.attempt.today?.remainingTaskIDs.contains("progress-photo") == false)
            let downloaded = try await sam.getPhoto(path: .init(photoID: attached.photoID)).ok.body.jpeg
            #expect(try await Data(collecting: downloaded, upTo: 1 << 20) == photo)
        }
    }
}
