import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeRuntime
import SurgeTestSupport
import Testing

/// The hardening issue's fuzz test: thousands of malformed, truncated, oversized, slow, pipelined and out-of-range
/// requests at the gateway and at progress, and poison records at every consumer. Every process must stay up, every
/// request must be answered below 500 (4xx as problem+json), and every poison record must be dead-lettered with its
/// reason while the consumer moves on.
///
/// `make test` runs the short form (a few hundred requests). `SURGE_FUZZ_LONG=1` runs thousands; `SURGE_FUZZ_SEED=<n>`
/// repeats a run (the seed is printed at the start).
@Suite("Hardening: fuzzed requests and poison events", .tags(.system), .kind(.system), .serialized, .tags(.hardening))
struct HardeningSystemTests {
    static let environment = ProcessInfo.processInfo.environment
    static let long = environment["SURGE_FUZZ_LONG"] == "1"
    static let seventyFiveHard = "c4a11e00-0075-4000-8000-000000000001"
    static let services = ["identity", "challenges", "progress", "gateway"]
    /// The fuzz runs every service, so that the gateway's export (which asks each of them) can answer.
    static let allServices = ["identity", "challenges", "progress", "leaderboard", "badges", "notifications", "gateway"]

    static func seed() -> UInt64 {
        environment["SURGE_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
    }

    // MARK: - Requests

    @Test("fuzz: malformed, truncated, oversized, slow, pipelined and out-of-range requests; every answer < 500, 4xx as problem+json")
    func fuzzRequests() async throws {
        let seed = Self.seed()
        let sizes = Self.long ? (gateway: 4000, signed: 800, unsigned: 300, rawRounds: 5) : (gateway: 300, signed: 60, unsigned: 30, rawRounds: 1)
        print("Hardening fuzz: seed \(seed) (SURGE_FUZZ_SEED=\(seed) repeats it), \(Self.long ? "long" : "short") form")
        let clock = ContinuousClock()
        let began = clock.now
        try await withTestStack("hardening-fuzz") { stack in
            for service in Self.allServices { try await stack.start(service) }
            let fixtures = try await Self.makeFixtures(stack)
            let recorder = FuzzRecorder()
            let sender = try FuzzSender(stack: stack)

            // The requests that took services down before, each with what it must answer.
            for (request, allowed) in Self.regressions(fixtures) {
                await sender.run(request, recorder: recorder, allowed: allowed)
            }

            // Random requests from the route table (to the gateway, and straight to progress signed and unsigned),
            // while the raw-socket shapes arrive at the same time.
            var generator = FuzzGenerator(random: SeededRandom(seed: seed), routes: try FuzzRoute.load(), fixtures: fixtures)
            var requests = (0..<sizes.gateway).map { _ in generator.next() }
            let progressRoutes = generator.routes.filter { $0.service == "progress" }
            for _ in 0..<sizes.signed {
                var request = generator.next(from: progressRoutes)
                let caller = generator.random.pick([fixtures.userID, fixtures.userID, fixtures.userID, nil, "not-a-uuid"])
                request.target = .progressSigned(caller: caller)
                requests.append(request)
            }
            for _ in 0..<sizes.unsigned {
                let route = generator.random.pick(progressRoutes)
                var request = generator.next(from: [route])
                request.method = route.method
                request.target = .progressUnsigned
                requests.append(request)
            }
            requests.append(contentsOf: Self.internalRoutes(fixtures))
            let shuffled = requests.shuffled(using: &generator.random)
            let raw = Self.rawCases(stack: stack, fixtures: fixtures)
            let rawRounds = sizes.rawRounds
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for round in 0..<rawRounds {
                        try await Self.runRaw(raw, round: round, recorder: recorder)
                    }
                }
                group.addTask {
                    await sender.runAll(shuffled, workers: 8, recorder: recorder)
                }
                try await group.waitForAll()
            }

            // Every process is up and healthy, and a normal request still works.
            for service in Self.allServices {
                let process = try stack.process(service)
                #expect(process.isRunning, "\(service) is down (exit status \(process.exitStatus.map(String.init) ?? "?")):\n\(Self.tail(process.logFile))")
                if process.isRunning {
                    let health = try await TestHTTP(baseURL: try process.baseURL).get("/healthz")
                    #expect(health.status == 200, "\(service) /healthz: \(health.status) \(health.text)")
                }
            }
            let guest = try await stack.http().post("/v1/auth/guest", json: ["displayName": "After the storm", "timeZone": "Europe/Rome"])
            #expect(guest.status == 201, "\(guest.text)")
            let token = try #require((guest.json["tokens"] as? [String: Any])?["accessToken"] as? String)
            let me = try await stack.http().authorized(token).get("/v1/me")
            #expect(me.status == 200, "\(me.text)")

            let failures = recorder.failures
            print("Hardening fuzz: \(recorder.total) requests in \(clock.now - began), seed \(seed); statuses \(recorder.summary)")
            #expect(
                failures.isEmpty,
                "\(failures.count) of \(recorder.total) requests broke the rules (seed \(seed)):\n\(failures.prefix(40).joined(separator: "\n"))")
        }
    }

    /// Users, an attempt with a log and a photo, a household with an invite and a chore, a habit, a friend request:
    /// real ids for the fuzz to name.
    static func makeFixtures(_ stack: TestStack) async throws -> FuzzFixtures {
        let http = try stack.http()
        func guest(_ name: String) async throws -> (id: String, token: String, refresh: String) {
            let response = try await http.post("/v1/auth/guest", json: ["displayName": name, "timeZone": "Europe/Rome"])
            let tokens = response.json["tokens"] as? [String: Any]
            guard response.status == 201, let id = (response.json["user"] as? [String: Any])?["id"] as? String,
                let token = tokens?["accessToken"] as? String, let refresh = tokens?["refreshToken"] as? String
            else { throw FixtureError("guest \(name): \(response.status) \(response.text)") }
            return (id, token, refresh)
        }
        func created(_ response: TestResponse, _ what: String, _ path: (TestResponse) -> Any?) throws -> String {
            guard (200..<300).contains(response.status), let value = path(response) as? String else {
                throw FixtureError("\(what): \(response.status) \(response.text)")
            }
            return value
        }
        let alice = try await guest("Fuzz Alice")
        let bob = try await guest("Fuzz Bob")
        let victim = try await guest("Fuzz Victim")
        let aliceID = UUID(uuidString: alice.id)!
        let hardID = UUID(uuidString: seventyFiveHard)!
        try await waitUntil("progress knows Alice and 75 Hard", timeout: .seconds(30)) {
            let member = try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(aliceID)")
            let definition = try await stack.database.count("SELECT count(*) FROM progress.definitions WHERE challenge_id = \(hardID)")
            return member == 1 && definition >= 1
        }
        let asAlice = http.authorized(alice.token)
        let attempt = try created(try await asAlice.post("/v1/attempts", json: ["challengeID": seventyFiveHard]), "attempt") {
            ($0.json["attempt"] as? [String: Any])?["attemptID"]
        }
        let log = try created(try await asAlice.post("/v1/attempts/\(attempt)/tasks/water/logs", json: ["quantity": 1.0]), "log") { $0.json["logID"] }
        let photoResponse = try await asAlice.send(.PUT, "/v1/attempts/\(attempt)/tasks/progress-photo/photo", body: jpeg, contentType: "image/jpeg")
        let photo = try created(photoResponse, "photo") { $0.json["photoID"] }
        let group = try created(try await asAlice.post("/v1/groups", json: ["name": "Fuzz home", "kind": "household", "timeZone": "Europe/Rome"]), "group") {
            $0.json["id"]
        }
        let code = try created(try await asAlice.post("/v1/groups/\(group)/invites"), "invite") { $0.json["code"] }
        let groupID = UUID(uuidString: group)!
        try await waitUntil("challenges knows the household", timeout: .seconds(30)) {
            try await stack.database.count("SELECT count(*) FROM challenges.group_members WHERE group_id = \(groupID)") == 1
        }
        let nextWeek = Date(timeIntervalSinceNow: 7 * 86_400).formatted(.iso8601.year().month().day())
        let habit = try created(
            try await asAlice.post("/v1/challenges", json: [
                "kind": "habit", "name": "Fuzz sketching", "description": "Draw",
                "tasks": [["taskID": "sketch", "title": "Sketch", "kind": "checkbox"] as [String: any Sendable]],
            ]), "habit"
        ) { ($0.json["definition"] as? [String: Any])?["challengeID"] }
        let chore = try created(
            try await asAlice.post("/v1/challenges", json: [
                "kind": "chore", "name": "Fuzz bins", "groupID": group,
                "chore": [
                    "assigneeID": alice.id, "firstDueOn": nextWeek, "dueTime": "20:00",
                    "recurrence": ["kind": "weekly", "weekdays": ["monday"]] as [String: any Sendable],
                ] as [String: any Sendable],
            ]), "chore"
        ) { ($0.json["definition"] as? [String: Any])?["challengeID"] }
        let friendRequest = try created(try await http.authorized(bob.token).post("/v1/friend-requests", json: ["userID": alice.id]), "friend request") {
            $0.json["id"]
        }
        let choreID = UUID(uuidString: chore)!
        let occurrence = try await eventually("progress has the chore's first occurrence", timeout: .seconds(30)) { () -> String? in
            try await stack.database.withAdmin { client in
                try await client.query("SELECT occurrence_id FROM progress.chore_occurrences WHERE chore_id = \(choreID)", logger: .test("fuzz"))
                    .collect().first.map { try $0.decode(UUID.self).uuidString.lowercased() }
            }
        }
        return FuzzFixtures(
            ids: [
                "attemptID": [attempt], "logID": [log], "photoID": [photo], "groupID": [group], "code": [code],
                "challengeID": [seventyFiveHard, habit, chore, "c4a11e00-0000-4000-8000-000000000006"],
                "taskID": ["water", "diet", "reading", "workouts", "progress-photo", "sketch", "chore"],
                "userID": [alice.id, bob.id], "assigneeID": [alice.id], "requestID": [friendRequest], "occurrenceID": [occurrence],
                "version": ["1", "2", "0", "-1", "99999999999999999999"],
            ],
            userToken: alice.token, otherToken: bob.token, victimToken: victim.token, userID: alice.id, refreshToken: bob.refresh)
    }

    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 7, count: 64))

    /// Requests that crashed a service or answered 500 before, and what each may answer now.
    static func regressions(_ fixtures: FuzzFixtures) -> [(FuzzRequest, ClosedRange<Int>)] {
        let attempt = fixtures.ids["attemptID"]![0]
        let group = fixtures.ids["groupID"]![0]
        let auth = [("Authorization", "Bearer \(fixtures.userToken)")]
        func json(_ method: String, _ uri: String, _ body: String, headers: [(String, String)] = auth, _ note: String) -> FuzzRequest {
            FuzzRequest(
                target: .gateway, method: method, uri: uri, headers: headers + [("content-type", "application/json")], body: Data(body.utf8),
                mutation: "regression: \(note)")
        }
        let anonymous: [(String, String)] = []
        var cases: [(FuzzRequest, ClosedRange<Int>)] = []
        for instant in ["10000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z"] {
            cases.append((json("POST", "/v1/attempts/\(attempt)/tasks/water/logs", #"{"quantity":1,"happenedAt":"\#(instant)"}"#, "log at \(instant)"), 400...499))
            cases.append((json("PUT", "/v1/attempts/\(attempt)/tasks/diet", #"{"done":true,"happenedAt":"\#(instant)"}"#, "tick at \(instant)"), 400...499))
        }
        for day in ["9999-12-31", "10000-01-01", "0001-01-01", "2201-01-01"] {
            cases.append((json("POST", "/v1/attempts/\(attempt)/tasks/water/logs", #"{"quantity":1,"date":"\#(day)"}"#, "log for \(day)"), 400...499))
        }
        cases.append((
            json(
                "POST", "/v1/challenges",
                #"{"kind":"competition","name":"Forever","competition":{"startsAt":"2026-11-16T00:00:00Z","endsAt":"9999-12-31T23:59:59Z","timeZone":"Europe/Rome","unit":"litres"}}"#,
                "competition ending 9999-12-31T23:59:59Z"), 400...499
        ))
        cases.append((
            json(
                "POST", "/v1/challenges",
                #"{"kind":"chore","name":"Someday","groupID":"\#(group)","chore":{"firstDueOn":"9999-12-31","recurrence":{"kind":"weekly","weekdays":["monday"]}}}"#,
                "chore first due 9999-12-31"), 400...499
        ))
        cases.append((
            json(
                "POST", "/v1/challenges",
                #"{"kind":"chore","name":"Monthly","groupID":"\#(group)","chore":{"firstDueOn":"2200-12-31","recurrence":{"kind":"monthly","dayOfMonth":31}}}"#,
                "monthly chore at the end of the supported range"), 200...499
        ))
        // NUL in text: PostgreSQL cannot store it; the answer is 400, never 500.
        let nul = #"a\u0000b"#
        cases += [
            (json("POST", "/v1/auth/guest", #"{"displayName":"\#(nul)","timeZone":"Europe/Rome"}"#, headers: anonymous, "NUL in displayName"), 400...400),
            (json("POST", "/v1/auth/guest", #"{"displayName":"Sam","timeZone":"Europe/Rome\u0000"}"#, headers: anonymous, "NUL in timeZone"), 400...400),
            (json("POST", "/v1/auth/register", #"{"displayName":"Sam","email":"a\u0000@example.com","password":"correct horse battery","timeZone":"UTC"}"#, headers: anonymous, "NUL in email"), 400...400),
            (json("POST", "/v1/auth/sign-in", #"{"email":"\#(nul)@example.com","password":"\#(nul)"}"#, headers: anonymous, "NUL in sign-in"), 400...400),
            (json("PATCH", "/v1/me", #"{"displayName":"\#(nul)"}"#, "NUL in profile"), 400...400),
            (json("POST", "/v1/groups", #"{"name":"\#(nul)","kind":"household","timeZone":"Europe/Rome"}"#, "NUL in group name"), 400...400),
            (json("POST", "/v1/challenges", #"{"kind":"habit","name":"\#(nul)","description":"x"}"#, "NUL in challenge name"), 400...400),
            (json("POST", "/v1/groups/join", #"{"code":"\#(nul)"}"#, "NUL in invite code"), 400...400),
            (json("POST", "/v1/challenges", #"{"kind":"habit","name":"ok","\#(nul)":1}"#, "NUL in a key"), 400...400),
            (
                FuzzRequest(
                    target: .gateway, method: "GET", uri: "/v1/challenges?q=a%00b", headers: auth, body: nil, mutation: "regression: NUL in a query"),
                400...400
            ),
        ]
        return cases
    }

    /// Progress's internal routes, called straight: unsigned must be refused, signed must not break.
    static func internalRoutes(_ fixtures: FuzzFixtures) -> [FuzzRequest] {
        [
            FuzzRequest(target: .progressUnsigned, method: "GET", uri: "/internal/export", headers: [], body: nil, mutation: "internal, unsigned"),
            FuzzRequest(
                target: .progressUnsigned, method: "GET", uri: "/internal/export",
                headers: [("X-Surge-Caller", fixtures.userID), ("X-Surge-Signature", "v1;t=0;sig=AAAA")], body: nil,
                mutation: "internal, forged signature"),
            FuzzRequest(target: .progressSigned(caller: nil), method: "GET", uri: "/internal/export", headers: [], body: nil, mutation: "internal, no caller"),
            FuzzRequest(
                target: .progressSigned(caller: "not-a-uuid"), method: "GET", uri: "/internal/export", headers: [], body: nil,
                mutation: "internal, garbage caller"),
            FuzzRequest(target: .progressSigned(caller: fixtures.userID), method: "GET", uri: "/internal/export", headers: [], body: nil, mutation: "internal"),
        ]
    }

    // MARK: - Raw-socket shapes

    struct RawCase: Sendable {
        enum Expectation: Sendable {
            /// Exactly these statuses, in order; a 4xx must be problem+json.
            case statuses([Int])
            /// At least one response, each < 500; a 4xx must be problem+json.
            case answered
            /// Perhaps not HTTP that can be routed: answered below 500 in any content type, or closed. Hummingbird
            /// answers a parse error itself (an empty 400 and a close) before any middleware could write a problem
            /// document; what the parser does accept is routed as usual.
            case unparseable
            /// The client vanished; only the server's survival counts.
            case vanished
        }

        var name: String
        var target: RawHTTP
        var pieces: [RawHTTP.Piece]
        var expecting = 1
        var finish = RawHTTP.Finish.read
        var readTimeout: Duration = .seconds(10)
        var expectation: Expectation
    }

    static func rawCases(stack: TestStack, fixtures: FuzzFixtures) -> [RawCase] {
        guard let gateway = try? RawHTTP(stack.process("gateway")), let progress = try? RawHTTP(stack.process("progress")),
            let signer = try? InternalCallSigner(secret: stack.internalSecret)
        else { return [] }
        let attempt = fixtures.ids["attemptID"]![0]
        let bearer = ("Authorization", "Bearer \(fixtures.userToken)")
        let random = UUID().uuidString.lowercased()
        let tenMegabytes = [UInt8](repeating: UInt8(ascii: "1"), count: 10 << 20)
        typealias Piece = RawHTTP.Piece

        func shared(_ http: RawHTTP, _ label: String) -> [RawCase] {
            let pipelined =
                http.request("GET", "/healthz") + http.request("GET", "/v1/me")
                + http.request("POST", "/v1/auth/guest", headers: [("content-type", "application/json")], body: Array("{".utf8))
                + http.request("GET", "/healthz")
            return [
                RawCase(name: "\(label): garbage request line", target: http, pieces: [Piece("GARBAGE\r\n\r\n")], expectation: .unparseable),
                RawCase(
                    name: "\(label): binary junk", target: http, pieces: [Piece((0..<512).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })],
                    expectation: .unparseable),
                RawCase(name: "\(label): unknown method", target: http, pieces: [Piece(http.request("FUZZ", "/v1/me"))], expectation: .unparseable),
                RawCase(name: "\(label): HTTP/9.9", target: http, pieces: [Piece("GET /healthz HTTP/9.9\r\n\r\n")], expectation: .unparseable),
                RawCase(name: "\(label): NUL in the target", target: http, pieces: [Piece("GET /v1/me\u{0} HTTP/1.1\r\nHost: x\r\n\r\n")], expectation: .unparseable),
                RawCase(
                    name: "\(label): negative content-length", target: http,
                    pieces: [Piece(http.head("POST", "/v1/auth/guest", headers: [("Content-Length", "-1")]))], expectation: .unparseable),
                RawCase(
                    name: "\(label): content-length and chunked", target: http,
                    pieces: [
                        Piece(
                            http.head("POST", "/v1/auth/guest", headers: [("Content-Length", "4"), ("Transfer-Encoding", "chunked"), ("content-type", "application/json")])
                                + RawHTTP.chunked(Array("{}".utf8), size: 2))
                    ], expectation: .unparseable),
                RawCase(
                    name: "\(label): bad chunk size", target: http,
                    pieces: [
                        Piece(http.head("POST", "/v1/auth/guest", headers: [("Transfer-Encoding", "chunked"), ("content-type", "application/json")])),
                        Piece("zz\r\nhello\r\n0\r\n\r\n", after: .milliseconds(200)),
                    ], expectation: .unparseable),
                RawCase(
                    name: "\(label): 100 KB header", target: http,
                    pieces: [Piece(http.head("GET", "/healthz", headers: [("X-Big", String(repeating: "b", count: 100_000))]))], expectation: .unparseable),
                RawCase(
                    name: "\(label): 2000 headers", target: http,
                    pieces: [Piece(http.head("GET", "/healthz", headers: (0..<2000).map { ("X-H\($0)", "v") }))], expectation: .unparseable),
                RawCase(
                    name: "\(label): 100 KB target", target: http,
                    pieces: [Piece(http.head("GET", "/v1/challenges?q=" + String(repeating: "q", count: 100_000), headers: [bearer]))],
                    expectation: .unparseable),
                RawCase(
                    name: "\(label): absolute-form target", target: http, pieces: [Piece(http.head("GET", "http://evil.example/healthz"))],
                    expectation: .unparseable),
                RawCase(name: "\(label): HTTP/1.0 without Host", target: http, pieces: [Piece("GET /healthz HTTP/1.0\r\n\r\n")], expectation: .statuses([200])),
                RawCase(
                    name: "\(label): cut off mid-headers, closed", target: http,
                    pieces: [Piece("POST /v1/auth/guest HTTP/1.1\r\nHost: x\r\nContent-Len")], finish: .close, expectation: .vanished),
                RawCase(
                    name: "\(label): cut off mid-headers, half-closed", target: http,
                    pieces: [Piece("POST /v1/auth/guest HTTP/1.1\r\nHost: x\r\nContent-Len")], finish: .halfClose, expectation: .unparseable),
                RawCase(
                    name: "\(label): body cut short, half-closed", target: http,
                    pieces: [
                        Piece(http.head("POST", "/v1/auth/guest", headers: [("Content-Length", "100"), ("content-type", "application/json")])),
                        Piece("{\"displayName\"", after: .milliseconds(300)),
                    ], finish: .halfClose, expectation: .unparseable),
                RawCase(
                    name: "\(label): body cut short, closed", target: http,
                    pieces: [
                        Piece(http.head("POST", "/v1/auth/guest", headers: [("Content-Length", "100"), ("content-type", "application/json")])),
                        Piece("{\"displayName\"", after: .milliseconds(300)),
                    ], finish: .close, expectation: .vanished),
                RawCase(name: "\(label): pipelined", target: http, pieces: [Piece(pipelined)], expecting: 4, expectation: .answered),
                RawCase(
                    name: "\(label): 50 pipelined", target: http,
                    pieces: [Piece((0..<50).flatMap { _ in http.request("GET", "/healthz") })], expecting: 50,
                    expectation: .statuses([Int](repeating: 200, count: 50))),
                RawCase(
                    name: "\(label): headers a byte at a time", target: http,
                    pieces: http.request("GET", "/healthz").enumerated().map { Piece([$0.element], after: $0.offset == 0 ? .zero : .milliseconds(10)) },
                    expectation: .statuses([200])),
            ]
        }

        var cases = shared(gateway, "gateway") + shared(progress, "progress")
        let signIn = [("content-type", "text/plain"), ("Content-Length", "10")]
        cases += [
            // Answered before the body arrived: this crashed the gateway with "only allow a single Iterator".
            RawCase(
                name: "gateway: text/plain sign-in, body 5 + 5 bytes 1.5 s apart", target: gateway,
                pieces: [Piece(gateway.head("POST", "/v1/auth/sign-in", headers: signIn)), Piece("hello"), Piece("world", after: .milliseconds(1500))],
                expectation: .statuses([415])),
            RawCase(
                name: "gateway: text/plain sign-in, chunked body 1.5 s apart", target: gateway,
                pieces: [
                    Piece(gateway.head("POST", "/v1/auth/sign-in", headers: [("content-type", "text/plain"), ("Transfer-Encoding", "chunked")])),
                    Piece(RawHTTP.chunk(Array("hello".utf8))), Piece(RawHTTP.chunk(Array("world".utf8)), after: .milliseconds(1500)),
                    Piece(RawHTTP.chunk([]), after: .milliseconds(500)),
                ], expectation: .statuses([415])),
            RawCase(
                name: "gateway: friend-request accept with a late JSON body", target: gateway,
                pieces: [
                    Piece(
                        gateway.head(
                            "POST", "/v1/friend-requests/\(random)/accept", headers: [bearer, ("content-type", "application/json"), ("Content-Length", "2")])),
                    Piece("{}", after: .milliseconds(1500)),
                ], expectation: .statuses([404])),
            RawCase(
                name: "gateway: 10 MB chunked body on a log route", target: gateway,
                pieces: [
                    Piece(
                        gateway.head(
                            "POST", "/v1/attempts/\(attempt)/tasks/water/logs",
                            headers: [bearer, ("content-type", "application/json"), ("Transfer-Encoding", "chunked")])),
                    Piece(RawHTTP.chunked(tenMegabytes, size: 65536), after: .milliseconds(300)),
                ], readTimeout: .seconds(20), expectation: .statuses([413])),
            RawCase(
                name: "gateway: pipelined sign-in then a late accept body", target: gateway,
                pieces: [
                    Piece(
                        gateway.request("POST", "/v1/auth/sign-in", headers: [("content-type", "text/plain")], body: Array("helloworld".utf8))
                            + gateway.head(
                                "POST", "/v1/friend-requests/\(random)/accept",
                                headers: [bearer, ("content-type", "application/json"), ("Content-Length", "2")])),
                    Piece("{}", after: .milliseconds(1000)),
                ], expecting: 2, expectation: .statuses([415, 404])),
            RawCase(
                name: "gateway: Expect 100-continue, body late", target: gateway,
                pieces: [
                    Piece(
                        gateway.head(
                            "POST", "/v1/auth/guest", headers: [("content-type", "application/json"), ("Expect", "100-continue"), ("Content-Length", "2")])),
                    Piece("{}", after: .milliseconds(1000)),
                ], expectation: .answered),
            RawCase(
                name: "gateway: slow headers", target: gateway,
                pieces: Self.split(gateway.request("GET", "/v1/me", headers: [bearer]), into: 4, pause: .milliseconds(400)),
                expectation: .statuses([200])),
            RawCase(
                name: "gateway: encoded NUL in the path", target: gateway,
                pieces: [Piece(gateway.request("GET", "/v1/challenges/%00", headers: [bearer]))], expectation: .answered),
            // Progress, called straight: without the gateway's signature every /v1/ call is refused before its body
            // is read; with it, the same slow shapes must not break the service either.
            RawCase(
                name: "progress: unsigned, text/plain body 5 + 5 bytes 1.5 s apart", target: progress,
                pieces: [
                    Piece(progress.head("POST", "/v1/attempts/\(attempt)/tasks/water/logs", headers: signIn)), Piece("hello"),
                    Piece("world", after: .milliseconds(1500)),
                ], expectation: .statuses([401])),
            RawCase(
                name: "progress: unsigned, 10 MB chunked body", target: progress,
                pieces: [
                    Piece(progress.head("POST", "/v1/attempts/\(attempt)/tasks/water/logs", headers: [("content-type", "application/json"), ("Transfer-Encoding", "chunked")])),
                    Piece(RawHTTP.chunked(tenMegabytes, size: 65536), after: .milliseconds(300)),
                ], readTimeout: .seconds(20), expectation: .statuses([401])),
        ]
        for (method, path, type) in [
            ("POST", "/v1/attempts/\(attempt)/tasks/water/logs", "text/plain"), ("POST", "/v1/attempts/\(attempt)/tasks/water/logs", "application/json"),
            ("PUT", "/v1/attempts/\(random)/tasks/diet", "application/json"), ("PUT", "/v1/attempts/\(attempt)/tasks/progress-photo/photo", "image/jpeg"),
        ] {
            let requestID = UUID().uuidString.lowercased()
            let signature = signer.signature(
                method: method, target: path, caller: fixtures.userID, requestID: requestID, body: .init(of: Array("{\"quan\":1}".utf8)))
            cases.append(
                RawCase(
                    name: "progress: signed \(method) \(path) \(type), body 5 + 5 bytes 1.5 s apart", target: progress,
                    pieces: [
                        Piece(
                            progress.head(
                                method, path,
                                headers: [
                                    ("content-type", type), ("Content-Length", "10"), ("X-Surge-Caller", fixtures.userID), ("X-Request-ID", requestID),
                                    ("X-Surge-Signature", signature),
                                ])), Piece("{\"qu"), Piece("an\":1}", after: .milliseconds(1500)),
                    ], expectation: .answered))
        }
        return cases
    }

    static func split(_ bytes: [UInt8], into parts: Int, pause: Duration) -> [RawHTTP.Piece] {
        let size = (bytes.count + parts - 1) / parts
        return stride(from: 0, to: bytes.count, by: size).enumerated().map { index, start in
            RawHTTP.Piece(Array(bytes[start..<min(start + size, bytes.count)]), after: index == 0 ? .zero : pause)
        }
    }

    static func runRaw(_ cases: [RawCase], round: Int, recorder: FuzzRecorder) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for rawCase in cases {
                group.addTask {
                    let exchange: RawHTTP.Exchange
                    do {
                        exchange = try await rawCase.target.exchange(
                            rawCase.pieces, expecting: rawCase.expecting, readTimeout: rawCase.readTimeout, finish: rawCase.finish)
                    } catch {
                        recorder.record("raw", status: nil, failure: "raw \(rawCase.name): \(error)")
                        return
                    }
                    recorder.record("raw", status: exchange.status, failure: Self.verdict(rawCase, exchange).map { "raw \(rawCase.name): \($0)\n\(exchange)" })
                }
            }
            try await group.waitForAll()
        }
    }

    static func verdict(_ rawCase: RawCase, _ exchange: RawHTTP.Exchange) -> String? {
        let broken = exchange.responses.filter { $0.status >= 500 || ((400..<500).contains($0.status) && !$0.isProblem) }
        switch rawCase.expectation {
        case .vanished:
            return nil
        case .unparseable:
            if let bad = exchange.responses.first(where: { $0.status >= 500 }) { return "answered \(bad.status)" }
            if exchange.timedOut { return "neither answered nor closed" }
            return nil
        case .answered:
            if exchange.responses.count < rawCase.expecting { return "expected \(rawCase.expecting) response(s)" }
            if !broken.isEmpty { return "answered \(broken.map(\.status)) without problem+json or >= 500" }
            return nil
        case .statuses(let statuses):
            if exchange.responses.map(\.status) != statuses { return "expected \(statuses.count > 5 ? "\(statuses.count) x \(statuses[0])" : "\(statuses)")" }
            if !broken.isEmpty { return "answered \(broken.map(\.status)) without problem+json" }
            return nil
        }
    }

    static func tail(_ file: URL, lines: Int = 30) -> String {
        let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    // MARK: - Poison events

    @Test("poison records at every consumer are dead-lettered with the reason; the consumer stays up and moves on")
    func poisonEvents() async throws {
        try await withTestStack("hardening-poison") { stack in
            let kafka = try #require(stack.kafka)
            for service in Self.services + ["leaderboard", "badges", "notifications", "analytics"] { try await stack.start(service) }
            let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "poisoner"), logger: .test("poison"))
            // One key for everything: each topic's records share a partition, so a valid event applied after the
            // poison proves the consumer got past it.
            let key = Data("hardening-poison".utf8)
            let poisons = try Self.poisons()
            for poison in poisons { _ = try await producer.send(poison.record(key: key)) }

            let member = UUID()
            let erased = UUID()
            let definitionID = UUID()
            let registered = CloudEvent(
                source: "/surge/identity", time: Date(),
                data: UserRegistered(userID: member, displayName: "After the poison", timeZone: "Europe/Rome", locale: nil, kind: .guest, registeredAt: Date()))
            let deleted = CloudEvent(source: "/surge/identity", time: Date(), data: UserDeleted(userID: erased, deletedAt: Date()))
            let published = CloudEvent(
                source: "/surge/challenges", time: Date(), data: ChallengePublished(definition: Self.habit(definitionID), publishedAt: Date()))
            let started = CloudEvent(
                source: "/surge/progress", time: Date(),
                data: AttemptStarted(
                    attemptID: UUID(), userID: member, challengeID: UUID(uuidString: Self.seventyFiveHard)!, challengeVersion: 1, kind: .curated,
                    attemptNumber: 1, startedOn: LocalDate("2026-11-16")!, timeZone: "Europe/Rome", groupID: nil, startedAt: Date()))
            _ = try await producer.send(Self.record(try EventRecord(registered), topic: Topic.identity.name, key: key))
            _ = try await producer.send(Self.record(try EventRecord(deleted), topic: Topic.identity.name, key: key))
            _ = try await producer.send(Self.record(try EventRecord(published), topic: Topic.challenges.name, key: key))
            _ = try await producer.send(Self.record(try EventRecord(started), topic: Topic.progress.name, key: key))

            // Each consumer moved on past its poison and applied what came after.
            let database = stack.database
            func processed(_ schema: String, _ id: UUID) async throws -> Bool {
                try await database.count("SELECT count(*) FROM \(unescaped: schema).processed_events WHERE event_id = \(id)") == 1
            }
            try await waitUntil("every consumer applied the valid events after the poison", timeout: .seconds(60)) {
                for (schema, id) in [
                    ("progress", registered.id), ("progress", published.id), ("challenges", registered.id), ("challenges", started.id),
                    ("gateway", deleted.id), ("leaderboard", registered.id), ("leaderboard", published.id), ("leaderboard", started.id),
                    ("badges", registered.id), ("badges", deleted.id), ("notifications", registered.id), ("notifications", deleted.id),
                    ("analytics", registered.id), ("analytics", deleted.id), ("analytics", started.id),
                ] {
                    if try await !processed(schema, id) { return false }
                }
                return true
            }
            #expect(try await database.count("SELECT count(*) FROM progress.members WHERE user_id = \(member)") == 1)
            #expect(try await database.count("SELECT count(*) FROM challenges.users WHERE user_id = \(member)") == 1)
            #expect(try await database.count("SELECT count(*) FROM gateway.erased_users WHERE user_id = \(erased)") == 1)
            #expect(try await database.count("SELECT count(*) FROM progress.definitions WHERE challenge_id = \(definitionID)") >= 1)

            // Every poison record is on the dead-letter topic of every consumer that handles its type, with the reason.
            for consumer in Self.consumers {
                let expected = poisons.filter { $0.consumers.contains(consumer) }
                let topic = Topic.deadLetter(consumerGroup: "surge-\(consumer)").name
                let dead = try await Self.read(topic: topic, atLeast: expected.count, kafka: kafka)
                let byName = Dictionary(grouping: dead) { $0.header("surge_test_poison") ?? "(not ours)" }
                #expect(
                    Set(byName.keys) == Set(expected.map(\.name)),
                    "\(topic): expected \(expected.map(\.name).sorted()), found \(byName.keys.sorted())")
                for poison in expected {
                    guard let record = byName[poison.name]?.first else { continue }
                    #expect(record.header(EventConsumer.DeadLetterHeader.error)?.isEmpty == false, "\(consumer) \(poison.name): no reason")
                    #expect(record.header(EventConsumer.DeadLetterHeader.originalTopic) == poison.topic, "\(consumer) \(poison.name)")
                    #expect(record.header(EventConsumer.DeadLetterHeader.originalOffset) != nil, "\(consumer) \(poison.name)")
                    #expect((record.value ?? Data()) == (poison.value ?? Data()), "\(consumer) \(poison.name): value changed")
                    #expect(byName[poison.name]?.count == 1, "\(consumer) \(poison.name) dead-lettered more than once")
                }
            }
            // A poison record had no effect anywhere it is poison.
            for poison in poisons {
                for schema in Self.consumers where !poison.soundTo.contains(schema) {
                    #expect(try await !processed(schema, poison.id), "\(schema) recorded poison \(poison.name) as processed")
                }
            }

            for service in Self.services {
                let process = try stack.process(service)
                #expect(process.isRunning, "\(service) is down:\n\(Self.tail(process.logFile))")
                if process.isRunning {
                    #expect(try await TestHTTP(baseURL: try process.baseURL).get("/healthz").status == 200, "\(service) /healthz")
                }
            }
            let guest = try await stack.http().post("/v1/auth/guest", json: ["displayName": "After the poison", "timeZone": "UTC"])
            #expect(guest.status == 201, "\(guest.text)")
        }
    }

    struct Poison: Sendable {
        var name: String
        var topic: String
        /// The CloudEvents type; nil sends no CloudEvents headers at all.
        var type: String?
        var value: Data?
        /// The consumer services that handle the type (or, without headers, every consumer of the topic).
        var consumers: Set<String>
        /// Consumers for which the record is sound (they read nothing of it that is broken): they apply it.
        var soundTo: Set<String> = []
        var id = UUID()

        func record(key: Data) -> KafkaRecord {
            var headers = [KafkaHeader("surge_test_poison", name)]
            if let type {
                headers += [
                    KafkaHeader(EventRecord.Header.specVersion, EventRecord.specVersion), KafkaHeader(EventRecord.Header.id, id.uuidString.lowercased()),
                    KafkaHeader(EventRecord.Header.source, "/surge/hardening"), KafkaHeader(EventRecord.Header.type, type),
                    KafkaHeader(EventRecord.Header.time, Timestamp.format(Date())), KafkaHeader(EventRecord.Header.contentType, EventRecord.contentType),
                ]
            }
            return KafkaRecord(topic: topic, key: key, value: value, headers: headers)
        }
    }

    /// What each consumer handles (Services/*/Sources: `routes.on(...)`): challenges and progress read identity's
    /// users, profiles and groups; challenges also friendships and progress's attempt starts; progress also
    /// training plans and challenges' definitions and invitations; the gateway only user deletions; analytics identity's accounts, profiles, preferences and deletions and progress's attempts, check-ins, days and streaks.
    /// Every service that consumes events.
    static let consumers = ["challenges", "progress", "gateway", "leaderboard", "badges", "notifications", "analytics"]

    static func poisons() throws -> [Poison] {
        let identity = Topic.identity.name
        let challenges = Topic.challenges.name
        let progress = Topic.progress.name
        let userID = UUID().uuidString.lowercased()
        func text(_ json: String) -> Data { Data(json.utf8) }
        // A valid chore definition, then its first due date moved to 9999-12-31 in the JSON itself.
        let chore = try SurgeJSON.encode(ChallengePublished(definition: Self.chore(UUID()), publishedAt: Date()))
        let farChore = text(String(decoding: chore, as: UTF8.self).replacingOccurrences(of: "2026-06-01", with: "9999-12-31"))
        let nulZone = try SurgeJSON.encode(
            UserRegistered(userID: UUID(), displayName: "Nul", timeZone: "Europe/Rome\u{0}", locale: nil, kind: .guest, registeredAt: Date()))
        return [
            Poison(
                name: "garbage bytes", topic: identity, type: UserRegistered.eventType,
                value: Data([0xFF, 0xFE, 0x00, 0x7B, 0x22]) + text("not json"), consumers: ["challenges", "progress", "leaderboard", "badges", "notifications", "analytics"]),
            Poison(
                name: "missing fields", topic: identity, type: UserDeleted.eventType, value: text("{}"),
                consumers: ["challenges", "progress", "gateway", "leaderboard", "badges", "notifications", "analytics"]),
            Poison(
                name: "wrong types", topic: identity, type: ProfileChanged.eventType,
                value: text(#"{"userID":42,"displayName":["x"],"timeZone":true,"previousTimeZone":null,"changedAt":"yesterday"}"#),
                consumers: ["challenges", "progress", "leaderboard", "notifications", "analytics"]),
            Poison(
                name: "no CloudEvents headers", topic: identity, type: nil,
                value: text(#"{"userID":"\#(userID)","deletedAt":"2026-11-16T00:00:00Z"}"#),
                consumers: ["challenges", "progress", "gateway", "leaderboard", "badges", "notifications", "analytics"]),
            Poison(
                name: "training plan wrong types", topic: identity, type: TrainingPlanChanged.eventType,
                value: text(#"{"userID":"\#(userID)","activityLevel":"godlike","maxPushUpsInOneSet":-1,"daysPerWeek":"7","dailyGoal":"lots","startingSeries":1,"recoverySeconds":1,"changedAt":"2026-11-16T00:00:00Z"}"#),
                consumers: ["progress"]),
            // Badges keeps no time zone: the rest of the registration is sound to it.
            Poison(
                name: "NUL in the time zone", topic: identity, type: UserRegistered.eventType, value: nulZone,
                consumers: ["challenges", "progress", "leaderboard", "notifications", "analytics"], soundTo: ["badges"]),
            Poison(name: "no value", topic: identity, type: GroupChanged.eventType, value: nil, consumers: ["challenges", "progress", "leaderboard"]),
            Poison(
                name: "definition cut short", topic: challenges, type: ChallengePublished.eventType, value: text(#"{"definition":"#),
                consumers: ["progress", "leaderboard", "badges", "notifications"]),
            Poison(
                name: "chore first due 9999-12-31", topic: challenges, type: ChallengePublished.eventType, value: farChore,
                consumers: ["progress", "leaderboard", "badges", "notifications"]),
            Poison(
                name: "invitation wrong types", topic: challenges, type: ChallengeInvitationSent.eventType,
                value: text(#"{"invitationID":"nope","challengeID":1,"inviteeID":null}"#), consumers: ["progress", "leaderboard", "notifications"]),
            Poison(
                name: "attempt missing fields", topic: progress, type: AttemptStarted.eventType, value: text(#"{"attemptID":"\#(userID)"}"#),
                consumers: ["challenges", "leaderboard", "badges", "notifications", "analytics"]),
            Poison(
                name: "attempt garbage", topic: progress, type: AttemptStarted.eventType, value: Data([0, 1, 2, 3, 0xC0, 0xAF]),
                consumers: ["challenges", "leaderboard", "badges", "notifications", "analytics"]),
        ]
    }

    static func habit(_ id: UUID) -> ChallengeDefinition {
        ChallengeDefinition(
            challengeID: id, version: 1, effectiveFrom: nil, kind: .habit, name: "After the poison", description: "", category: "hobby",
            difficulty: .beginner, visibility: .private, ownerID: UUID(), groupID: nil, durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "sketch", title: "Sketch", kind: .checkbox)], rules: ChallengeRules(failure: FailureRule(mode: .none)))
    }

    static func chore(_ id: UUID) -> ChallengeDefinition {
        ChallengeDefinition(
            challengeID: id, version: 1, effectiveFrom: nil, kind: .chore, name: "Someday", description: "", category: "household",
            difficulty: .beginner, visibility: .group, ownerID: UUID(), groupID: UUID(), durationDays: nil, estimatedDailyMinutes: nil,
            tasks: [ChallengeTask(taskID: "chore", title: "Someday", kind: .checkbox, cadence: Cadence(kind: .weekdays, weekdays: [.monday]))],
            rules: ChallengeRules(failure: FailureRule(mode: .none)),
            chore: ChoreDetails(assigneeID: nil, firstDueOn: LocalDate("2026-06-01")!, dueTime: nil, recurrence: ChoreRecurrence(kind: .weekly, weekdays: [.monday])))
    }

    static func record(_ event: EventRecord, topic: String, key: Data) -> KafkaRecord {
        KafkaRecord(topic: topic, key: key, value: event.data, headers: event.kafkaHeaders.map { KafkaHeader(name: $0.name, value: $0.value) })
    }

    /// Everything on `topic` from the beginning, once at least `count` records arrived or 30 seconds passed.
    static func read(topic: String, atLeast count: Int, kafka: TestKafka) async throws -> [KafkaMessage] {
        let received = ReceivedMessages()
        let consumer = try KafkaConsumer(
            configuration: kafka.configuration(clientID: "dead-letter-reader"), groupID: "reader-\(UUID().uuidString)", topics: [topic],
            logger: kafka.logger
        ) { message in
            received.append(message)
            return .handled
        }
        let task = Task { try await consumer.run() }
        _ = try? await waitUntil("\(count) records on \(topic)", timeout: .seconds(30)) { received.count >= count }
        // A moment more, so that a record dead-lettered twice would show.
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        _ = try? await task.value
        return received.all
    }
}

extension Tag {
    /// The hardening fuzz: `swift test --filter Hardening`.
    @Tag static var hardening: Self
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Counts answers and collects the ones that broke the rules, across tasks.
final class FuzzRecorder: Sendable {
    private let state = LockedValue<(total: Int, statuses: [String: [Int: Int]], failures: [String])>((0, [:], []))

    func record(_ target: String, status: Int?, failure: String?) {
        state.withLock { state in
            state.total += 1
            state.statuses[target, default: [:]][status ?? 0, default: 0] += 1
            if let failure { state.failures.append(failure) }
        }
    }

    var total: Int { state.value.total }
    var failures: [String] { state.value.failures }
    var summary: String {
        state.value.statuses.sorted { $0.key < $1.key }.map { target, counts in
            "\(target): " + counts.sorted { $0.key < $1.key }.map { "\($0.key == 0 ? "none" : String($0.key))×\($0.value)" }.joined(separator: " ")
        }.joined(separator: "; ")
    }
}

/// Sends fuzz requests with AsyncHTTPClient and judges each answer.
struct FuzzSender: Sendable {
    let gateway: String
    let progress: String
    let signer: InternalCallSigner

    init(stack: TestStack) throws {
        gateway = try stack.process("gateway").baseURL
        progress = try stack.process("progress").baseURL
        signer = try InternalCallSigner(secret: stack.internalSecret)
    }

    func runAll(_ requests: [FuzzRequest], workers: Int, recorder: FuzzRecorder) async {
        let next = LockedValue(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    while true {
                        let index = next.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < requests.count else { return }
                        await run(requests[index], recorder: recorder)
                    }
                }
            }
        }
    }

    /// Whether every percent-escape of the target decodes to UTF-8. Where one does not, the HTTP client itself
    /// rewrites the path it sends, so the signature made over the original rightly fails (401).
    static func decodesCleanly(_ uri: String) -> Bool {
        let path = String(uri.prefix { $0 != "?" })
        return path.removingPercentEncoding != nil
    }

    func run(_ request: FuzzRequest, recorder: FuzzRecorder, allowed: ClosedRange<Int>? = nil) async {
        let label: String
        var http: HTTPClientRequest
        switch request.target {
        case .gateway:
            label = "gateway"
            http = HTTPClientRequest(url: gateway + request.uri)
        case .progressSigned(let caller):
            label = "progress signed"
            http = HTTPClientRequest(url: progress + request.uri)
            let requestID = UUID().uuidString.lowercased()
            if let caller { http.headers.add(name: InternalHeaders.caller.rawName, value: caller) }
            http.headers.add(name: InternalHeaders.requestID.rawName, value: requestID)
            http.headers.add(
                name: InternalCallSigner.header.rawName,
                value: signer.signature(
                    method: request.method, target: request.uri, caller: caller, requestID: requestID,
                    body: request.body.map { .init(of: $0) } ?? .empty))
        case .progressUnsigned:
            label = "progress unsigned"
            http = HTTPClientRequest(url: progress + request.uri)
        }
        http.method = HTTPMethod(rawValue: request.method)
        let signing: Set<String> = ["x-surge-caller", "x-surge-signature", "x-request-id"]
        for (name, value) in request.headers {
            // A signed call keeps the signature's own headers: a second caller or request id would (rightly) void it.
            if case .progressSigned = request.target, signing.contains(name.lowercased()) { continue }
            http.headers.add(name: name, value: value)
        }
        if let body = request.body { http.body = .bytes(ByteBuffer(data: body)) }
        do {
            let response = try await HTTPClient.shared.execute(http, timeout: .seconds(30))
            let status = Int(response.status.code)
            let contentType = response.headers.first(name: "content-type") ?? "none"
            // An event stream never ends: its first bytes are the answer.
            let body = contentType.hasPrefix("text/event-stream")
                ? try await response.body.first { _ in true } ?? ByteBuffer()
                : try await response.body.collect(upTo: 32 << 20)
            let text = String(buffer: body)
            var problem: String?
            if let allowed, !allowed.contains(status) {
                problem = "expected \(allowed.lowerBound == allowed.upperBound ? "\(allowed.lowerBound)" : "\(allowed)")"
            } else if case .progressUnsigned = request.target, status != 401 || !text.contains("unauthenticated-call") {
                problem = "an unsigned call to a service must be refused with 401 unauthenticated-call"
            } else if case .progressSigned = request.target, text.contains("unauthenticated-call"),
                Self.decodesCleanly(request.uri)
            {
                problem = "the test's own signature was refused"
            } else if status >= 500 {
                problem = "server error"
            } else if (400..<500).contains(status), !contentType.lowercased().hasPrefix("application/problem+json") {
                problem = "a 4xx without problem+json"
            }
            recorder.record(
                label, status: status,
                failure: problem.map { "\($0): \(request)\n    → \(status) [\(contentType)] \(text.prefix(300))" })
        } catch {
            recorder.record(label, status: nil, failure: "no answer (\(error)): \(request)")
        }
    }
}
