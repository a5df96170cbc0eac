import Foundation
import Logging
import SurgeContracts
import SurgePostgres
import SurgeRuntime
import _ConnectionPoolModule
import Synchronization
import SurgeTestSupport
import Testing

@Suite("Service runtime", .tags(.unit), .kind(.unit))
struct RuntimeTests {
    static let base = [
        "DATABASE_URL": "postgres://surge_identity:secret@db.internal:5433/surge?sslmode=require",
        "INTERNAL_AUTH_SECRET": String(repeating: "x", count: 32),
    ]

    @Test("settings come from the environment with documented defaults")
    func defaults() throws {
        let settings = try ServiceSettings.fromEnvironment(service: "identity", defaultPort: 8081, EnvironmentReader(Self.base))
        #expect(settings.environment == .development)
        #expect(settings.httpHost == "127.0.0.1")
        #expect(settings.httpPort == 8081)
        #expect(settings.database.host == "db.internal")
        #expect(settings.database.port == 5433)
        #expect(settings.database.username == "surge_identity")
        #expect(settings.database.password == "secret")
        #expect(settings.database.tls == .require)
        #expect(settings.kafka.bootstrapServers == "localhost:9092")
        #expect(settings.logFormat == .json)
        #expect(settings.outbox.pollInterval == .milliseconds(1000))
        #expect(settings.outbox.outboxRetention == .seconds(168 * 3600))
        #expect(settings.outbox.inboxRetention == .seconds(720 * 3600))
        #expect(settings.consumerMaxAttempts == 5)
        #expect(settings.consumerBatchLimit == 256)
        #expect(settings.shutdownTimeout == .seconds(10))
        #expect(settings.problemTypeBase == Problem.defaultTypeBase)
        let pointed = EnvironmentReader(Self.base.merging(["PROBLEM_TYPE_BASE_URL": "https://api.example.com/problems/"]) { _, new in new })
        #expect(try ServiceSettings.fromEnvironment(service: "identity", defaultPort: 8081, pointed).problemTypeBase == "https://api.example.com/problems/")
    }

    @Test("each bad setting is named in the error")
    func badSettings() {
        func failure(_ extra: [String: String]) -> String? {
            do {
                _ = try ServiceSettings.fromEnvironment(service: "x", defaultPort: 1, EnvironmentReader(Self.base.merging(extra) { _, new in new }))
                return nil
            } catch let error as ConfigurationError {
                return error.variable
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(["HTTP_PORT": "70000"]) == "HTTP_PORT")
        #expect(failure(["SURGE_ENV": "staging"]) == "SURGE_ENV")
        #expect(failure(["LOG_LEVEL": "loud"]) == "LOG_LEVEL")
        #expect(failure(["DATABASE_URL": "mysql://x"]) == "DATABASE_URL")
        #expect(failure(["KAFKA_PROPERTIES": "novalue"]) == "KAFKA_PROPERTIES")
        #expect(failure(["CONSUMER_MAX_ATTEMPTS": "0"]) == "CONSUMER_MAX_ATTEMPTS")
        #expect(failure(["CONSUMER_BATCH_LIMIT": "0"]) == "CONSUMER_BATCH_LIMIT")
        #expect(failure(["CONSUMER_BATCH_LIMIT": "many"]) == "CONSUMER_BATCH_LIMIT")
        #expect(failure(["INBOX_RETENTION_HOURS": "0"]) == "INBOX_RETENTION_HOURS")
        #expect(failure(["INTERNAL_AUTH_SECRET": "too short"]) == "INTERNAL_AUTH_SECRET")
        #expect(failure(["SHUTDOWN_TIMEOUT_SECONDS": "0"]) == "SHUTDOWN_TIMEOUT_SECONDS")
        for base in ["api.example.com/problems/", "ftp://api.example.com/problems/", "https://api.example.com/problems", "https:///problems/"] {
            #expect(failure(["PROBLEM_TYPE_BASE_URL": base]) == "PROBLEM_TYPE_BASE_URL", "\(base)")
        }
        #expect(throws: ConfigurationError.self) { try ServiceSettings.fromEnvironment(service: "x", defaultPort: 1, EnvironmentReader([:])) }
    }

    @Test("the simulated clock moves only where it is allowed, never in production")
    func clock() throws {
        let development = try ServiceSettings.fromEnvironment(
            service: "progress", defaultPort: 1, EnvironmentReader(Self.base.merging(["SIMULATED_CLOCK": "true"]) { _, new in new }))
        let clock = try ServiceClock.from(development)
        #expect(clock.isSimulated)
        let target = Date(timeIntervalSince1970: 2_000_000_000)
        clock.set(target)
        #expect(abs(clock.now().timeIntervalSince(target)) < 1)
        let production = try ServiceSettings.fromEnvironment(
            service: "progress", defaultPort: 1,
            EnvironmentReader(Self.base.merging(["SIMULATED_CLOCK": "true", "SURGE_ENV": "production"]) { _, new in new }))
        #expect(throws: ConfigurationError.self) { try ServiceClock.from(production) }
        #expect(!ServiceClock.system.isSimulated)
    }

    struct Body: Codable, Equatable {
        struct Inner: Codable, Equatable { var amount: Double }
        var name: String
        var count: Int
        var tags: [String]?
        var inner: Inner?
        var day: LocalDate?
    }

    func fields(_ json: String) -> [String] {
        do {
            _ = try StrictJSONDecoder.decode(Body.self, from: Data(json.utf8))
            return []
        } catch let problem as Problem {
            return (problem.errors ?? []).map(\.field) + (problem.errors == nil ? ["(\(problem.type))"] : [])
        } catch {
            return ["\(error)"]
        }
    }

    @Test("strict decoding names the field of every kind of bad input")
    func strictDecoding() throws {
        #expect(try StrictJSONDecoder.decode(Body.self, from: Data(#"{"name":"a","count":1,"day":"2026-11-21"}"#.utf8)).day == LocalDate("2026-11-21"))
        #expect(fields(#"{"name":"a","count":1,"extra":true}"#) == ["extra"])
        #expect(fields(#"{"name":"a","count":1,"inner":{"amount":1,"sneaky":2}}"#) == ["inner.sneaky"])
        #expect(fields(#"{"name":"a","count":"one"}"#) == ["count"])
        #expect(fields(#"{"name":"a"}"#) == ["count"])
        #expect(fields(#"{"name":"a","count":1,"tags":[1]}"#) == ["tags[0]"])
        #expect(fields(#"{"name":"a","count":1,"day":"21/11/2026"}"#) == ["day"])
        #expect(fields(#"{"name":null,"count":1}"#) == ["name"])
        #expect(fields(#"{"name": "a", "#) == ["(https://surge.example/problems/malformed-body)"])
        #expect(fields("") == ["(https://surge.example/problems/malformed-body)"])
    }

    func problem(_ json: String) -> Problem? {
        do {
            _ = try StrictJSONDecoder.decode(Body.self, from: Data(json.utf8))
            return nil
        } catch {
            return error as? Problem
        }
    }

    @Test("a NUL character anywhere in the body is a 400 naming each field, keys included")
    func nulCharacters() throws {
        let value = try #require(problem(#"{"name":"a\u0000b","count":1}"#))
        #expect(value.status == .badRequest)
        #expect(value.type == "https://surge.example/problems/invalid-characters")
        #expect(value.errors == [.init(field: "name", message: "must not contain NUL characters")])
        #expect(fields(#"{"name":"\u0000","count":1,"tags":["ok","x\u0000"],"inner":{"amount":1}}"#) == ["name", "tags[1]"])
        #expect(fields(#"{"name":"a","count":1,"na\u0000me":"b"}"#) == [#"na\u0000me"#])
        #expect(fields(#"{"name":"a","count":1,"inner":{"amount":1,"\u0000":{"x":"\u0000"}}}"#) == [#"inner.\u0000"#, #"inner.\u0000.x"#])
        #expect(fields(#""\u0000""#) == ["body"])
        // Other control characters are text like any other; only NUL cannot be stored.
        #expect(fields(#"{"name":"a\u0001\t","count":1}"#) == [])
        // A raw NUL byte is not JSON at all.
        let raw = Data(#"{"name":"a"#.utf8) + Data([0]) + Data(#"","count":1}"#.utf8)
        #expect(throws: Problem.malformedBody("The body is not valid JSON.")) { try StrictJSONDecoder.decode(Body.self, from: raw) }
    }

    @Test("NUL in a query parameter (name or value) is a 400 naming it")
    func nulInQueries() throws {
        #expect(throws: Never.self) { try Problem.checkNoNUL(in: ["q": "yoga", "kind": "habit"]) }
        #expect(throws: Problem.invalidCharacters([
            .init(field: #"k\u0000"#, message: "must not contain NUL characters"), .init(field: "q", message: "must not contain NUL characters"),
        ])) { try Problem.checkNoNUL(in: ["q": "yo\u{0}ga", "k\u{0}": "v", "kind": "habit"]) }
    }

    @Test("dates and instants outside 1970...2200 are 422 field errors naming the field", arguments: [
        (#"{"name":"a","count":1,"day":"9999-12-31"}"#, "day"), (#"{"name":"a","count":1,"day":"1969-12-31"}"#, "day"),
        (#"{"name":"a","count":1,"day":"2201-01-01"}"#, "day"), (#"{"name":"a","count":1,"day":"10000-01-01"}"#, "day"),
        (#"{"name":"a","count":1,"at":"10000-01-01T00:00:00Z"}"#, "at"), (#"{"name":"a","count":1,"at":"9999-12-31T23:59:59Z"}"#, "at"),
        (#"{"name":"a","count":1,"at":"2201-01-01T00:00:00Z"}"#, "at"), (#"{"name":"a","count":1,"at":"1969-12-31T23:59:59Z"}"#, "at"),
        (#"{"name":"a","count":1,"events":[{"at":"2026-01-01T00:00:00Z"},{"at":"2201-01-01T00:00:00Z"}]}"#, "events[1].at"),
    ])
    func dateBounds(_ json: String, _ field: String) throws {
        struct Event: Codable { var at: Date }
        struct Timed: Codable {
            var name: String
            var count: Int
            var day: LocalDate?
            var at: Date?
            var events: [Event]?
        }
        do {
            _ = try StrictJSONDecoder.decode(Timed.self, from: Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch let problem as Problem {
            #expect(problem.status == .unprocessableContent)
            #expect(problem.errors?.map(\.field) == [field])
            #expect(problem.errors?.first?.message.hasPrefix("expected a ") == true)
        }
        let edges = #"{"name":"a","count":1,"day":"2200-12-31","at":"2200-12-31T23:59:59.999Z","events":[{"at":"1970-01-01T00:00:00Z"}]}"#
        #expect(try StrictJSONDecoder.decode(Timed.self, from: Data(edges.utf8)).day == LocalDate("2200-12-31"))
    }

    @Test("a leap second, or another instant the format style would roll over, is a 422 naming the field", arguments: [
        (#"{"name":"a","count":1,"at":"2026-06-30T23:59:60Z"}"#, "at"), (#"{"name":"a","count":1,"at":"2026-09-21T12:00:60.250+02:00"}"#, "at"),
        (#"{"name":"a","count":1,"events":[{"at":"2026-09-21T24:00:00Z"}]}"#, "events[0].at"),
    ])
    func rolledOverInstants(_ json: String, _ field: String) throws {
        struct Event: Codable { var at: Date }
        struct Timed: Codable {
            var name: String
            var count: Int
            var at: Date?
            var events: [Event]?
        }
        do {
            _ = try StrictJSONDecoder.decode(Timed.self, from: Data(json.utf8))
            Issue.record("accepted \(json)")
        } catch let problem as Problem {
            #expect(problem.status == .unprocessableContent)
            #expect(problem.errors?.map(\.field) == [field])
            #expect(problem.errors?.first?.message.hasPrefix("expected an RFC 3339 timestamp") == true)
        }
    }

    @Test("cursors round-trip and refuse what the API did not issue")
    func cursors() {
        struct Position: Codable, Equatable { var at: Date; var id: UUID }
        let position = Position(at: Date(timeIntervalSince1970: 1_800_000_000.5), id: UUID())
        let cursor = Cursor.encode(position)
        #expect(!cursor.contains("=") && !cursor.contains("+") && !cursor.contains("/"))
        #expect(Cursor.decode(Position.self, from: cursor) == position)
        #expect(Cursor.decode(Position.self, from: "not-a-cursor") == nil)
        // A forged position far outside the instants Surge issues never reaches SQL.
        for forged in [1e300, -1e18, 7_000_000_000] {
            let text = Base64URL.encode(Data(#"{"at":\#(forged),"id":"\#(position.id.uuidString)"}"#.utf8))
            #expect(Cursor.decode(Position.self, from: text) == nil, "\(forged)")
        }
        // PostgreSQL cannot compare text holding U+0000: such a position names no row of any list.
        struct Named: Codable { var name: String; var id: UUID }
        #expect(Cursor.decode(Named.self, from: Cursor.encode(Named(name: "a b", id: position.id))) != nil)
        #expect(Cursor.decode(Named.self, from: Cursor.encode(Named(name: "a\u{0}b", id: position.id))) == nil)
        let request = PageRequest<Position>(limit: 2, after: nil)
        let page = request.page([1, 2, 3].map { Position(at: Date(timeIntervalSince1970: Double($0)), id: position.id) }) { $0 }
        #expect(page.items.count == 2)
        #expect(page.nextCursor.flatMap { Cursor.decode(Position.self, from: $0) }?.at == Date(timeIntervalSince1970: 2))
        #expect(request.page([position]) { $0 }.nextCursor == nil)
    }

    @Test("log lines are JSON objects with the message and metadata")
    func jsonLogs() throws {
        let lines = Mutex<[String]>([])
        var handler = JSONLogHandler(label: "test") { line in lines.withLock { $0.append(line) } }
        handler.metadata["service"] = "identity"
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .info
        logger.info("Listening", metadata: ["port": "8081"])
        logger.debug("hidden")
        let captured = lines.withLock { $0 }
        #expect(captured.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(captured[0].utf8)) as? [String: Any])
        #expect(object["message"] as? String == "Listening")
        #expect(object["level"] as? String == "info")
        #expect(object["port"] as? String == "8081")
        #expect(object["service"] as? String == "identity")
        #expect(Timestamp.parse(object["time"] as? String ?? "") != nil)
    }

    @Test("problems carry a stable type, the status and the fields")
    func problems() {
        let problem = Problem.validation(field: "timeZone", "must be an IANA time zone")
        #expect(problem.type == "https://surge.example/problems/validation")
        #expect(problem.status == .unprocessableContent)
        #expect(Problem.forStatus(.notFound, detail: nil).type.hasSuffix("not-found"))
        #expect(Problem.forStatus(.methodNotAllowed, detail: nil).status == .methodNotAllowed)
        struct Boom: Error {}
        #expect(Problem.from(Boom(), logger: Logger(label: "t")).status == .internalServerError)
    }

    @Test("a database outage answers 503 with Retry-After and is logged as a warning, not as an unhandled error")
    func databaseOutageProblem() throws {
        let levels = Mutex<[String]>([])
        let logger = Logger(label: "test") { label in JSONLogHandler(label: label) { line in levels.withLock { $0.append(line) } } }
        let problem = Problem.from(ConnectionPoolError.connectionCreationCircuitBreakerTripped, logger: logger)
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.retryAfter != nil)
        #expect(problem.type.hasSuffix("unavailable"))
        let lines = levels.withLock { $0 }
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
    }

    @Test("database URLs keep percent-encoded characters of the password, and round-trip")
    func databaseURLs() throws {
        let percent = try DatabaseConfiguration(url: "postgres://u:50%25off@h/db")
        #expect(percent.password == "50%off")
        #expect(try DatabaseConfiguration(url: "postgres://us%40er:p%3Aw@h/db").username == "us@er")
        for password in ["50%off", "a@b", "a:b", "%41%", "p@ss:w%rd/?#[]"] {
            let configuration = DatabaseConfiguration(host: "db.internal", port: 5433, username: "surge", password: password, database: "surge")
            let parsed = try DatabaseConfiguration(url: configuration.url)
            #expect(parsed == configuration, "\(password) via \(configuration.url)")
        }
    }
}

@Suite("Catching up with other services' events", .tags(.unit), .kind(.unit))
struct CatchUpTests {
    @Test("a value that appears while waiting is returned as soon as it is seen")
    func appears() async throws {
        let checks = Mutex(0)
        let value = try await CatchUp(timeout: .seconds(30)).value { () -> String? in
            let count = checks.withLock { count in
                count += 1
                return count
            }
            return count >= 3 ? "profile" : nil
        }
        #expect(value == "profile")
        #expect(checks.withLock { $0 } == 3)
    }

    @Test("a value that never appears gives nil once the timeout has passed, not before")
    func neverAppears() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let value = try await CatchUp(timeout: .milliseconds(200)).value { () -> Int? in nil }
        #expect(value == nil)
        #expect(clock.now - started >= .milliseconds(200))
        #expect(try await CatchUp(timeout: .milliseconds(50)).until { false } == false)
        #expect(try await CatchUp(timeout: .seconds(30)).until { true } == true)
    }

    @Test("a wait that runs out is one retryable problem")
    func problem() {
        let problem = CatchUp.problem("Your account is still being set up here.")
        #expect(problem.status == .serviceUnavailable)
        #expect(problem.retryAfter == 1)
        #expect(problem.type == Problem.typeBase + "catching-up")
    }
}
