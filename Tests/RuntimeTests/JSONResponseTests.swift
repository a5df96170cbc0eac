import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@Suite("JSON responses: every service writes whole-second instants and lower-case UUIDs", .tags(.unit), .kind(.unit))
struct JSONResponseTests {
    struct Item: Codable, ResponseEncodable {
        var id: UUID
        var createdAt: Date
    }

    @Test("bodies and problems use the API dialect; the development clock keeps milliseconds")
    func responses() async throws {
        let id = UUID()
        let router = Router(context: SurgeRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.get("/item") { _, _ in Item(id: id, createdAt: Date(timeIntervalSince1970: 1_790_000_000.75)) }
        router.get("/page") { _, _ in Page(items: [Item(id: id, createdAt: Date(timeIntervalSince1970: 1_790_000_000.75))], nextCursor: nil) }
        router.get("/missing") { _, _ -> String in throw Problem.notFound("No item \(id.key).") }
        let clock = ServiceClock(simulated: true)
        clock.set(Date(timeIntervalSince1970: 1_790_000_000.25))
        clock.addRoutes(to: router)
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/item", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(text == #"{"createdAt":"2026-09-21T14:13:20Z","id":"\#(id.key)"}"#)
            }
            try await client.execute(uri: "/page", method: .get) { response in
                #expect(String(buffer: response.body) == #"{"items":[{"createdAt":"2026-09-21T14:13:20Z","id":"\#(id.key)"}]}"#)
            }
            try await client.execute(uri: "/missing", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(String(buffer: response.body).contains(id.key))
            }
            try await client.execute(uri: "/internal/clock", method: .get) { response in
                let now = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any])["now"] as? String
                // The simulated clock runs on from the instant it was set to.
                #expect(now?.range(of: #"^2026-09-21T14:1\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil, "\(now ?? "")")
            }
        }
    }
}

@Suite("JSON cursors keep instants exactly", .tags(.unit), .kind(.unit))
struct JSONCursorTests {
    struct Position: Codable, Equatable {
        var at: Date
        var id: UUID
    }

    @Test("a position's instant survives a cursor to the microsecond; older millisecond cursors still decode")
    func exactInstants() throws {
        let position = Position(at: Date(timeIntervalSince1970: 1_790_000_000.123456), id: UUID())
        #expect(Cursor.decode(Position.self, from: Cursor.encode(position)) == position)
        let older = Base64URL.encode(Data(#"{"at":"2026-09-21T14:13:20.125Z","id":"\#(position.id.key)"}"#.utf8))
        #expect(Cursor.decode(Position.self, from: older)?.at == Date(timeIntervalSince1970: 1_790_000_000.125))
        #expect(Cursor.decode(Position.self, from: Base64URL.encode(Data(#"{"at":true,"id":"x"}"#.utf8))) == nil)
    }
}
