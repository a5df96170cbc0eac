import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// The live event stream as two housemates' phones see it: identity, challenges, progress, leaderboard and
/// notifications as processes, the gateway following the topics and streaming Server-Sent Events.
@Suite("Stream: live events through the gateway", .tags(.system), .kind(.system), .serialized)
struct StreamSystemTests {
    typealias User = ProgressStage.User

    static func withStage(_ name: String, gateway: [String: String] = [:], _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("challenges", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("leaderboard", environment: ["SIMULATED_CLOCK": "true", "WINDOW_CLOSE_INTERVAL_MS": "100"])
            try await stack.start("notifications", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway", environment: gateway)
            try await body(ProgressStage(stack: stack))
        }
    }

    static let rome = LocalCalendar(zoneNamed: "Europe/Rome")!
    static let wednesday = LocalDate("2026-11-18")!

    /// Aiko's household with Bruno in it, and a daily chore per name (3 points unless `points` says), due from Wednesday.
    static func household(_ stage: ProgressStage, chores names: [String], points: [String: Int] = [:]) async throws -> (aiko: User, bruno: User, household: String, chores: [String: String]) {
        try await stage.setClock(rome.instant(of: LocalTime("10:00")!, on: wednesday))
        let aiko = try await stage.user("Aiko", timeZone: "Europe/Rome")
        let bruno = try await stage.user("Bruno", timeZone: "Europe/Rome")
        let household = try await stage.household(owner: aiko, members: [bruno], timeZone: "Europe/Rome")
        var chores: [String: String] = [:]
        for name in names {
            let chore = try await aiko.http.post("/v1/challenges", json: [
                "kind": "chore", "name": name, "groupID": household,
                "chore": ["firstDueOn": wednesday.description, "recurrence": ["kind": "daily"] as [String: any Sendable], "points": points[name] ?? 3] as [String: any Sendable],
            ])
            chores[name] = try #require((chore.json["definition"] as? [String: Any])?["challengeID"] as? String, "\(chore.text)")
        }
        return (aiko, bruno, household, chores)
    }

    /// The pending occurrence of a chore, once progress has scheduled it.
    static func occurrence(of choreID: String, in household: String, as user: User) async throws -> String {
        try await eventually("an occurrence of \(choreID)") { () -> String? in
            let items = try await user.http.get("/v1/groups/\(household)/chore-occurrences").json["items"] as? [[String: Any]] ?? []
            return items.first { ($0["choreID"] as? String)?.lowercased() == choreID.lowercased() }?["occurrenceID"] as? String
        }
    }

    static func connect(_ stage: ProgressStage, _ user: User, boards: [String] = [], lastEventID: String? = nil) async throws -> EventStreamClient {
        var headers = user.http.defaultHeaders
        if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
        let query = boards.isEmpty ? "" : "?boards=" + boards.joined(separator: ",")
        let stream = try await EventStreamClient.connect(try stage.stack.http().baseURL + "/v1/stream" + query, headers: headers)
        #expect(stream.status == 200)
        try await stream.waitFor("ready") { $0.name == "ready" }
        return stream
    }

    @Test("one housemate completes a chore: the other's stream shows the chore, the new board standing and the overtaken notification")
    func housemates() async throws {
        try await Self.withStage("stream-housemates") { stage in
            let (aiko, bruno, household, chores) = try await Self.household(stage, chores: ["Dishes", "Bins"], points: ["Bins": 5])
            let dishes = try await Self.occurrence(of: chores["Dishes"]!, in: household, as: bruno)
            let bins = try await Self.occurrence(of: chores["Bins"]!, in: household, as: aiko)
            let brunoStream = try await Self.connect(stage, bruno, boards: ["group:\(household)"])
            let aikoStream = try await Self.connect(stage, aiko, boards: ["group:\(household)"])
            defer { brunoStream.close(); aikoStream.close() }

            #expect(try await bruno.http.post("/v1/chore-occurrences/\(dishes)/complete").status == 200)
            try await brunoStream.waitFor("Bruno's own standing") { $0.name == "board" && $0.json["userID"] as? String == bruno.id.key }
            try await brunoStream.waitFor("Bruno's points") { $0.name == "points" }

            #expect(try await aiko.http.post("/v1/chore-occurrences/\(bins)/complete").status == 200)
            let chore = try await brunoStream.waitFor("Aiko's chore") { $0.name == "chore" && $0.json["completedBy"] as? String == aiko.id.key }
            #expect(chore.json["groupID"] as? String == household.lowercased())
            let standing = try await brunoStream.waitFor("Aiko's new standing") { $0.name == "board" && $0.json["userID"] as? String == aiko.id.key }
            let week = (standing.json["windows"] as? [[String: Any]])?.first { ($0["window"] as? String)?.contains("-W") == true }
            #expect(week?["score"] as? Double == 5 && week?["rank"] as? Int == 1)
            let notification = try await brunoStream.waitFor("the overtaken notification") { $0.name == "notification" }
            #expect(notification.json["userID"] as? String == bruno.id.key)
            #expect(brunoStream.events.allSatisfy { $0.name != "points" || $0.json["userID"] as? String == bruno.id.key }, "another's points are theirs alone")
            try await aikoStream.waitFor("Aiko's own points") { $0.name == "points" && $0.json["userID"] as? String == aiko.id.key }
            let ids = brunoStream.events.compactMap(\.id)
            #expect(Set(ids).count == ids.count, "each event once")
        }
    }

    @Test("reconnecting with Last-Event-ID replays the missed events once, in order; an unknown id gets event: reset")
    func resume() async throws {
        try await Self.withStage("stream-resume") { stage in
            let (aiko, bruno, household, chores) = try await Self.household(stage, chores: ["Dishes", "Bins", "Plants", "Laundry"])
            let witness = try await Self.connect(stage, bruno, boards: ["group:\(household)"])
            let phone = try await Self.connect(stage, bruno, boards: ["group:\(household)"])
            defer { witness.close() }
            let first = try await Self.occurrence(of: chores["Dishes"]!, in: household, as: aiko)
            #expect(try await aiko.http.post("/v1/chore-occurrences/\(first)/complete").status == 200)
            let seen = try await phone.waitFor("the first chore") { $0.name == "chore" }
            phone.close()

            for name in ["Bins", "Plants", "Laundry"] {
                let occurrence = try await Self.occurrence(of: chores[name]!, in: household, as: aiko)
                #expect(try await aiko.http.post("/v1/chore-occurrences/\(occurrence)/complete").status == 200)
            }
            try await waitUntil("the witness saw the three chores the phone missed") {
                witness.events.filter { $0.name == "chore" }.count == 4
            }
            // What the witness received after the phone's last event, board standings coalesced aside.
            let witnessed = witness.events.drop { $0.id != seen.id }.dropFirst().filter { $0.name != "board" }.compactMap(\.id)

            let resumed = try await Self.connect(stage, bruno, boards: ["group:\(household)"], lastEventID: seen.id)
            defer { resumed.close() }
            let replayed = resumed.events.prefix { $0.name != "ready" }.filter { $0.name != "board" }
            #expect(replayed.filter { $0.name == "chore" }.count == 3, "\(replayed)")
            #expect(replayed.compactMap(\.id) == witnessed, "the missed events once each, in the order they happened")
            #expect(!resumed.events.contains { $0.name == "reset" })

            let lost = try await Self.connect(stage, bruno, lastEventID: "progress-0-999999999")
            defer { lost.close() }
            #expect(lost.events.first?.name == "reset")
        }
    }

    @Test("a housemate who leaves stops receiving the household's events and is told; others keep receiving")
    func leaving() async throws {
        try await Self.withStage("stream-leaving") { stage in
            let (aiko, bruno, household, chores) = try await Self.household(stage, chores: ["Dishes"])
            let brunoStream = try await Self.connect(stage, bruno, boards: ["group:\(household)"])
            let aikoStream = try await Self.connect(stage, aiko, boards: ["group:\(household)"])
            defer { brunoStream.close(); aikoStream.close() }
            #expect(try await bruno.http.post("/v1/groups/\(household)/leave").status == 204)
            let unsubscribed = try await brunoStream.waitFor("unsubscribed") { $0.name == "unsubscribed" }
            #expect(unsubscribed.json["board"] as? String == "group:\(household.lowercased())")

            let occurrence = try await Self.occurrence(of: chores["Dishes"]!, in: household, as: aiko)
            #expect(try await aiko.http.post("/v1/chore-occurrences/\(occurrence)/complete").status == 200)
            try await aikoStream.waitFor("the chore, for Aiko") { $0.name == "chore" }
            try await aikoStream.waitFor("the board, for Aiko") { $0.name == "board" }
            #expect(!brunoStream.events.contains { $0.name == "chore" || $0.name == "board" }, "\(brunoStream.events)")

            let again = try await EventStreamClient.connect(
                try stage.stack.http().baseURL + "/v1/stream?boards=group:\(household)", headers: bruno.http.defaultHeaders)
            #expect(again.status == 404, "a board the caller may no longer see")
            again.close()
        }
    }

    @Test("a client that stops reading is cut off, with nothing kept for it, while the same user's other phone receives every event")
    func frozenClient() async throws {
        // A queue of 128 (a burst of 2,048 while a write is awaited): the healthy phone is read by this test process,
        // which a full suite on two cores can hold up for seconds while check-ins keep coming.
        try await Self.withStage("stream-frozen", gateway: ["STREAM_QUEUE_LIMIT": "128"]) { stage in
            let aiko = try await stage.user("Aiko", timeZone: "Europe/Rome")
            let habit = try await stage.habit(for: aiko, graceMinutes: 60)
            try await stage.setClock(Self.wednesday, "10:00", for: aiko)
            let started = try await aiko.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
            let gateway = try stage.stack.process("gateway")
            let port = try #require(URL(string: try stage.stack.http().baseURL)?.port)

            let phone = try await Self.connect(stage, aiko)
            defer { phone.close() }
            let frozen = try StalledStreamClient(port: port, path: "/v1/stream", headers: aiko.http.defaultHeaders)
            try await waitUntil("both streams are connected") {
                try await MetricsPage.scrape(gateway).sum("surge_stream_connections") == 2
            }

            // Each tick or untick is a check-in event (and more) for both streams, until the frozen one's socket and
            // queue are full.
            var checkIns = 0
            var cutOff = false
            while !cutOff, checkIns < 600 {
                let tick = try await aiko.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": checkIns % 2 == 0])
                #expect(tick.status == 200, "\(tick.text)")
                checkIns += 1
                if checkIns % 10 == 0 { cutOff = try await MetricsPage.scrape(gateway).sum("surge_stream_cut_off_total") >= 1 }
            }
            #expect(cutOff, "cut off after \(checkIns) check-ins (the phone received \(phone.events.count) events, its stream ended: \(phone.hasEnded))")
            try await waitUntil("the frozen stream is gone while its client still reads nothing") {
                try await MetricsPage.scrape(gateway).sum("surge_stream_connections") == 1
            }

            #expect(try await aiko.http.put("/v1/attempts/\(attemptID)/tasks/sketch", json: ["done": checkIns % 2 == 0]).status == 200)
            checkIns += 1
            let received = { phone.events.filter { $0.name == "checkin" || $0.name == "checkin-undone" }.count }
            do {
                try await waitUntil("the other phone received every check-in, the last one after the cut") { received() == checkIns }
            } catch {
                Issue.record("the other phone received \(received()) of \(checkIns) check-ins; its stream ended: \(phone.hasEnded)")
                throw error
            }

            let (text, closedByServer) = await frozen.drain(timeout: .seconds(20))
            #expect(closedByServer, "the server ended the frozen stream")
            #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("event: ready"))
            let delivered = text.components(separatedBy: "event: checkin").count - 1
            #expect(delivered < checkIns, "the frozen client got \(delivered) of \(checkIns) check-ins before the cut")
        }
    }

    @Test("tickets open one stream each; no token, a bad board or too many streams get a clear problem; a stopping gateway says to reconnect")
    func access() async throws {
        try await Self.withStage("stream-access", gateway: ["STREAM_CONNECTIONS_PER_USER": "2"]) { stage in
            let aiko = try await stage.user("Aiko", timeZone: "Europe/Rome")
            let base = try stage.stack.http().baseURL
            let issued = try await aiko.http.post("/v1/stream/tickets")
            #expect(issued.status == 201, "\(issued.text)")
            let ticket = try #require(issued.json["ticket"] as? String)
            let browser = try await EventStreamClient.connect(base + "/v1/stream?ticket=\(ticket)")
            defer { browser.close() }
            #expect(browser.status == 200)
            let ready = try await browser.waitFor("ready") { $0.name == "ready" }
            #expect(ready.json["userID"] as? String == aiko.id.key)

            let reused = try await stage.stack.http().get("/v1/stream?ticket=\(ticket)")
            #expect(reused.status == 401 && (reused.json["type"] as? String)?.hasSuffix("invalid-stream-ticket") == true, "\(reused.text)")
            #expect(try await stage.stack.http().get("/v1/stream").status == 401)
            let badBoard = try await aiko.http.get("/v1/stream?boards=table:1")
            #expect(badBoard.status == 422, "\(badBoard.text)")
            let unknown = try await aiko.http.get("/v1/stream?boards=group:\(UUID().uuidString)")
            #expect(unknown.status == 404, "\(unknown.text)")

            let second = try await Self.connect(stage, aiko)
            defer { second.close() }
            let third = try await aiko.http.get("/v1/stream")
            #expect(third.status == 429 && (third.json["type"] as? String)?.hasSuffix("too-many-streams") == true, "\(third.text)")

            // A replica going away tells its clients to reconnect elsewhere, then ends their streams.
            await (try stage.stack.process("gateway")).stop()
            try await second.waitFor("shutdown") { $0.name == "shutdown" }
            try await second.waitUntilEnded()
            #expect(browser.events.contains { $0.name == "shutdown" })
        }
    }
}
