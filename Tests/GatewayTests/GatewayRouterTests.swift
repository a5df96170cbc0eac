import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

/// What the gateway answers itself, through its whole router (`GatewayService.addRoutes`): the data export, stream
/// tickets and the stream, and the OpenAPI document. Every service is one small upstream reached through
/// `UPSTREAM_URL_TEMPLATE` (`http://127.0.0.1:<port>/{service}`), so it knows which service was asked.
@Suite("Gateway: export, stream and OpenAPI routes", .tags(.unit), .kind(.unit))
struct GatewayRouterTests {
    /// Every service's export (only for a call the gateway signed; `progress` keeps nothing, `failing` cannot answer),
    /// and the leaderboard's answer whether the caller may see a group's board (only `visibleGroup`).
    static func upstream(signer: InternalCallSigner, visibleGroup: UUID = UUID(), failing: LockedValue<String?> = .init(nil)) -> some ApplicationProtocol {
        let router = Router()
        router.get("/:service/internal/export") { request, context in
            let service = try context.parameters.require("service")
            let headers = request.headers
            guard
                signer.isValid(
                    headers[InternalCallSigner.header], method: "GET", target: "/internal/export", caller: headers[InternalHeaders.caller],
                    requestID: headers[InternalHeaders.requestID] ?? "")
            else { return Response(status: .unauthorized) }
            if service == "progress" { return Response(status: .notFound) }
            if service == failing.value { return Response(status: .internalServerError) }
            let part = #"{"service":"\#(service)","caller":"\#(headers[InternalHeaders.caller] ?? "")"}"#
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: part)))
        }
        router.get("/:service/v1/leaderboards/groups/:groupID") { _, context in
            Response(status: UUID(uuidString: try context.parameters.require("groupID")) == visibleGroup ? .ok : .notFound)
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    static func environment(upstreamPort: Int?) throws -> [String: String] {
        ["UPSTREAM_URL_TEMPLATE": "http://127.0.0.1:\(try #require(upstreamPort))/{service}"]
    }

    /// The problem document of a response; nil when it is none.
    static func problem(_ response: HummingbirdTesting.TestResponse) -> Problem.Body? {
        guard response.headers[.contentType] == "application/problem+json" else { return nil }
        return try? JSONDecoder().decode(Problem.Body.self, from: Data(buffer: response.body))
    }

    @Test("the export merges every service's part for the caller into one attachment, without a service that keeps nothing; a failing service is 503; no token 401")
    func export() async throws {
        let fixture = try await GatewayRouterFixture()
        let user = UUID()
        let failing = LockedValue<String?>(nil)
        try await withUpstreamClient { client in
            try await Self.upstream(signer: fixture.signer, failing: failing).test(.live) { upstream in
                let router = try fixture.router(environment: try Self.environment(upstreamPort: upstream.port), client: client)
                try await Application(router: router).test(.router) { gateway in
                    let bearer = try await fixture.bearer(user)
                    try await gateway.execute(uri: "/v1/me/export", method: .get, headers: bearer) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentDisposition] == "attachment; filename=\"surge-export-\(user.key).json\"")
                        let document = try SurgeJSON.decode(ExportController.ExportDocument.self, from: Data(buffer: response.body))
                        #expect(document.userID == user.key)
                        let expected = SurgeService.exporting.map(\.rawValue).filter { $0 != "progress" }
                        #expect(document.services.byService.keys.sorted() == expected.sorted())
                        for service in expected {
                            #expect(document.services.byService[service] == .object(["service": .string(service), "caller": .string(user.key)]), "\(service)")
                        }
                    }
                    failing.withLock { $0 = "badges" }
                    try await gateway.execute(uri: "/v1/me/export", method: .get, headers: bearer) { response in
                        #expect(response.status == .serviceUnavailable)
                        let problem = Self.problem(response)
                        #expect(problem?.type == Problem.typeBase + "unavailable" && problem?.detail?.contains("badges") == true)
                    }
                    try await gateway.execute(uri: "/v1/me/export", method: .get) { response in
                        #expect(response.status == .unauthorized)
                        #expect(Self.problem(response)?.type == Problem.typeBase + "unauthorized")
                    }
                }
            }
        }
    }

    @Test("a photo larger than the upstream client's buffer comes through whole, with its length and type, streamed")
    func largeAnswer() async throws {
        let fixture = try await GatewayRouterFixture()
        let photo = ByteBuffer(bytes: (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let upstream = Router()
        upstream.get("/:service/v1/photos/:photoID") { _, _ in
            Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: photo))
        }
        try await withUpstreamClient { client in
            try await Application(router: upstream, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { service in
                let router = try fixture.router(environment: try Self.environment(upstreamPort: service.port), client: client)
                try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { gateway in
                    try await gateway.execute(uri: "/v1/photos/\(UUID().key)", method: .get, headers: try await fixture.bearer(UUID())) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentType] == "image/jpeg")
                        #expect(response.headers[.contentLength] == String(photo.readableBytes))
                        #expect(response.body == photo)
                    }
                }
            }
        }
    }

    @Test("a ticket (201) opens the caller's stream once, with the boards the leaderboard shows; the stream ends with its session; a used ticket, no credentials, a bad board (422) or a hidden one (404) are refused")
    func stream() async throws {
        let fixture = try await GatewayRouterFixture()
        let (user, session, visible) = (UUID(), UUID(), UUID())
        try await withUpstreamClient { client in
            try await Self.upstream(signer: fixture.signer, visibleGroup: visible).test(.live) { upstream in
                let router = try fixture.router(environment: try Self.environment(upstreamPort: upstream.port), client: client)
                try await Application(router: router).test(.router) { gateway in
                    let bearer = try await fixture.bearer(user, session: session)
                    let ticket = try await gateway.execute(uri: "/v1/stream/tickets", method: .post, headers: bearer) { response in
                        #expect(response.status == .created)
                        return try SurgeJSON.decode(StreamController.Ticket.self, from: Data(buffer: response.body)).ticket
                    }
                    try await gateway.execute(uri: "/v1/stream/tickets", method: .post) { response in
                        #expect(response.status == .unauthorized)
                    }

                    // The stream runs until something ends it: here, the session the ticket was issued to.
                    let ending = Task {
                        try await waitUntil("the stream subscribed") { fixture.hub.connectionCount == 1 }
                        fixture.hub.endSessions([session])
                    }
                    let path = "/v1/stream?ticket=\(ticket)&boards=group:\(visible.key)"
                    let events = try await gateway.execute(uri: path, method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(response.headers[.contentType] == "text/event-stream")
                        return String(buffer: response.body)
                    }
                    try await ending.value
                    #expect(events.hasPrefix("retry: 2000\n\n"), "\(events)")
                    #expect(events.contains("event: ready\ndata: {"), "\(events)")
                    #expect(events.contains(user.key) && events.contains("group:\(visible.key)"), "\(events)")
                    #expect(events.hasSuffix("event: session-ended\ndata: {\"reason\":\"This session was signed out: sign in again.\"}\n\n"), "\(events)")

                    try await gateway.execute(uri: path, method: .get) { response in
                        #expect(response.status == .unauthorized)
                        #expect(Self.problem(response)?.type == Problem.typeBase + "invalid-stream-ticket")
                    }
                    try await gateway.execute(uri: "/v1/stream", method: .get) { response in
                        #expect(response.status == .unauthorized)
                        #expect(Self.problem(response)?.type == Problem.typeBase + "unauthorized")
                    }
                    try await gateway.execute(uri: "/v1/stream?boards=user:\(user.key)", method: .get, headers: bearer) { response in
                        #expect(response.status == .unprocessableContent)
                        #expect(Self.problem(response)?.errors?.map(\.field) == ["boards"])
                    }
                    try await gateway.execute(uri: "/v1/stream?boards=group:\(UUID().key)", method: .get, headers: bearer) { response in
                        #expect(response.status == .notFound)
                        #expect(Self.problem(response)?.type == Problem.typeBase + "not-found")
                    }
                    #expect(fixture.hub.connectionCount == 0)
                }
            }
        }
    }

    @Test("the assembled router serves the OpenAPI document of every public route")
    func openAPI() async throws {
        let fixture = try await GatewayRouterFixture()
        try await withUpstreamClient { client in
            try await Application(router: try fixture.router(environment: [:], client: client)).test(.router) { gateway in
                try await gateway.execute(uri: "/openapi.json", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json")
                    #expect(String(buffer: response.body) == PublicAPI.openAPIDocument)
                }
            }
        }
    }

    @Test("a stream whose client went away frees its place at once: five streams opened and closed in turn, then a sixth, are all let in")
    func closedStreamsFreeTheirPlace() async throws {
        let fixture = try await GatewayRouterFixture()
        #expect(fixture.hub.settings.connectionsPerUser == 5 && fixture.hub.settings.heartbeatSeconds >= 15)
        let bearer = try await fixture.bearer(UUID()).map { ($0.name.rawName, $0.value) }
        try await withUpstreamClient { client in
            let app = Application(
                router: try fixture.router(environment: [:], client: client), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { gateway in
                let url = "http://127.0.0.1:\(try #require(gateway.port))/v1/stream"
                for attempt in 1...6 {
                    let stream = try await EventStreamClient.connect(url, headers: bearer)
                    try #require(stream.status == 200, "stream \(attempt) answered \(stream.status)")
                    try await stream.waitFor("ready") { $0.name == "ready" }
                    stream.close()
                }
                // Well before the first heartbeat (15 s), which used to be what found them gone.
                try await waitUntil("every closed stream let go of its place", timeout: .seconds(5)) { fixture.hub.connectionCount == 0 }
            }
        }
    }
}
