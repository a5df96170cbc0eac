import Foundation
import PostgresNIO
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport
import Testing

/// The foundation's promises, proven with every service as its own process.
@Suite("Foundation: events across processes", .tags(.system), .kind(.system), .serialized)
struct FoundationSystemTests {
    func registerGuest(_ http: TestHTTP, name: String = "Sam") async throws -> UUID {
        let response = try await http.post("/v1/auth/guest", json: ["displayName": name, "timeZone": "Europe/Rome"])
        #expect(response.status == 201, "\(response.text)")
        let id = try #require((response.json["user"] as? [String: Any])?["id"] as? String)
        return try #require(UUID(uuidString: id))
    }

    func members(_ stack: TestStack) async throws -> Int {
        try await stack.database.count("SELECT count(*) FROM progress.members")
    }

    @Test("an HTTP call to the gateway becomes a row in identity, an event on Kafka and a row in progress")
    func roundTrip() async throws {
        try await withTestStack("round-trip", broker: .executable) { stack in
            try await stack.start("identity")
            try await stack.start("progress")
            try await stack.start("gateway")
            let http = try stack.http()
            let response = try await http.post(
                "/v1/auth/guest", json: ["displayName": "Sarah", "timeZone": "America/New_York"],
                headers: [("X-Request-ID", "round-trip-1"), ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")])
            #expect(response.status == 201)
            #expect(response.header("X-Request-ID") == "round-trip-1")
            let userID = try #require(UUID(uuidString: (response.json["user"] as? [String: Any])?["id"] as? String ?? ""))
            try await waitUntil("progress learned the member") {
                try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(userID) AND time_zone = 'America/New_York'") == 1
            }
            let trace = try await stack.database.withAdmin { client in
                try await client.query("SELECT request_id, traceparent FROM identity.outbox", logger: .test("t")).collect().first?.decode((String?, String?).self)
            }
            #expect(trace?.0 == "round-trip-1")
            #expect(trace?.1?.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-") == true)

            // Every service reports requests, produced and consumed records and outbox lag, and says it is alive.
            let identity = try await eventually("identity's relay published") { () -> MetricsPage? in
                let page = try await MetricsPage.scrape(try stack.process("identity"))
                return page.sum("surge_outbox_published_total") >= 1 ? page : nil
            }
            #expect(identity.sum("hb_requests_total", ["http_route": "/v1/auth/guest"]) >= 1)
            #expect(identity.sum("surge_kafka_produced_total", ["result": "ok"]) >= 1)
            #expect(identity.text.contains("surge_outbox_lag_seconds"))
            #expect(identity.text.contains("surge_outbox_pending"))
            let progress = try await MetricsPage.scrape(try stack.process("progress"))
            #expect(progress.sum("surge_kafka_consumed_total", ["topic": Topic.identity.name]) >= 1)
            #expect(progress.sum("surge_events_handled_total", ["result": "applied"]) >= 1)
            for service in ["identity", "progress", "gateway"] {
                #expect(try await TestHTTP(baseURL: try stack.process(service).baseURL).get("/healthz").status == 200)
            }
        }
    }

    @Test("kill -9 between commit and publish: after restart the event is delivered and applied exactly once")
    func crashBetweenCommitAndPublish() async throws {
        try await withTestStack("crash") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("identity")
            try await stack.start("progress")
            try await stack.start("gateway")
            kafka.cluster.setBrokersAvailable(false)
            let userID = try await registerGuest(try stack.http())
            #expect(try await stack.database.count("SELECT count(*) FROM identity.users WHERE id = \(userID)") == 1)
            #expect(try await stack.database.count("SELECT count(*) FROM identity.outbox_pending") == 1)

            try await stack.process("identity").crash()
            kafka.cluster.setBrokersAvailable(true)
            try await stack.process("identity").start()

            try await waitUntil("member applied", timeout: .seconds(60)) { try await members(stack) == 1 }
            try await waitUntil("outbox marked published") {
                try await stack.database.count("SELECT count(*) FROM identity.outbox_pending") == 0
            }
            #expect(try await stack.database.count("SELECT count(*) FROM progress.processed_events") == 1)
            let metrics = try await MetricsPage.scrape(try stack.process("progress"))
            #expect(metrics.sum("surge_events_handled_total", ["result": "applied"]) == 1)
        }
    }

    @Test("the same event published twice, a poison record and a good one: one effect, one dead letter, no stall")
    func duplicatesAndPoison() async throws {
        try await withTestStack("duplicates") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("progress")
            let producer = try KafkaProducer(configuration: kafka.configuration(), logger: .test("t"))
            let event = CloudEvent(
                source: "/surge/identity", time: Date(),
                data: UserRegistered(userID: UUID(), displayName: "Dup", timeZone: "Asia/Tokyo", locale: nil, kind: .guest, registeredAt: Date()))
            let record = KafkaRecord(publishing: try EventRecord(event), to: Topic.identity.name)
            _ = try await producer.send(record)
            _ = try await producer.send(record)
            _ = try await producer.send(KafkaRecord(topic: Topic.identity.name, key: Data("x".utf8), value: Data("{oops".utf8)))
            let good = CloudEvent(
                source: "/surge/identity", time: Date(),
                data: UserRegistered(userID: UUID(), displayName: "Good", timeZone: "UTC", locale: nil, kind: .guest, registeredAt: Date()))
            _ = try await producer.send(KafkaRecord(publishing: try EventRecord(good), to: Topic.identity.name))

            try await waitUntil("both members present") { try await members(stack) == 2 }
            let metrics = try await eventually("duplicate counted") { () -> MetricsPage? in
                let page = try await MetricsPage.scrape(try stack.process("progress"))
                return page.sum("surge_events_handled_total", ["result": "duplicate"]) == 1 ? page : nil
            }
            #expect(metrics.sum("surge_events_handled_total", ["result": "applied"]) == 2)
            let dead = try await kafka.readAll(topic: "surge.deadletter.surge-progress", expecting: 1)
            #expect(dead.first?.value == Data("{oops".utf8))
            #expect(dead.first?.header("surge_error")?.isEmpty == false)
        }
    }

    @Test("with the broker down for a few seconds, everything written meanwhile arrives once it is back")
    func brokerOutage() async throws {
        try await withTestStack("outage") { stack in
            let kafka = try #require(stack.kafka)
            try await stack.start("identity")
            try await stack.start("progress")
            try await stack.start("gateway")
            let http = try stack.http()
            _ = try await registerGuest(http, name: "before")
            try await waitUntil("first member") { try await members(stack) == 1 }
            kafka.cluster.setBrokersAvailable(false)
            for index in 0..<10 { _ = try await registerGuest(http, name: "during-\(index)") }
            try await Task.sleep(for: .seconds(3))
            kafka.cluster.setBrokersAvailable(true)
            try await waitUntil("all members", timeout: .seconds(90)) { try await members(stack) == 11 }
            #expect(try await stack.database.count("SELECT count(*) FROM progress.processed_events") == 11)
        }
    }

    @Test("two replicas of a consumer service share the partitions and apply each event once")
    func replicasSharePartitions() async throws {
        try await withTestStack("replicas") { stack in
            try await stack.start("identity")
            let replicas = [try await stack.start("progress", instance: "progress-a"), try await stack.start("progress", instance: "progress-b")]
            try await stack.start("gateway")
            try await waitUntil("both replicas own partitions", timeout: .seconds(30)) {
                var owned: [Double] = []
                for replica in replicas {
                    owned.append(try await MetricsPage.scrape(replica).sum("surge_kafka_assigned_partitions", ["group": "surge-progress"]))
                }
                return owned.allSatisfy { $0 > 0 }
            }
            let http = try stack.http()
            for index in 0..<30 { _ = try await registerGuest(http, name: "replica-\(index)") }
            try await waitUntil("30 members") { try await members(stack) == 30 }
            var applied = 0.0
            for replica in replicas {
                applied += try await MetricsPage.scrape(replica).sum("surge_events_handled_total", ["result": "applied"])
            }
            #expect(applied == 30)
            #expect(try await stack.database.count("SELECT count(*) FROM progress.processed_events") == 30)
        }
    }

    @Test("two replicas starting at once migrate once, and SIGTERM stops a service cleanly")
    func concurrentStartAndGracefulStop() async throws {
        try await withTestStack("migrate") { stack in
            async let first = stack.start("identity", instance: "identity-a")
            async let second = stack.start("identity", instance: "identity-b")
            let replicas = try await [first, second]
            let rows = try await stack.database.withAdmin { client in
                try await client.query("SELECT component, version, count(*) OVER (PARTITION BY component, version) FROM identity.schema_migrations", logger: .test("t"))
                    .collect().map { try $0.decode((String, Int, Int).self) }
            }
            #expect(!rows.isEmpty)
            #expect(rows.allSatisfy { $0.2 == 1 })
            #expect(Set(rows.map(\.0)) == ["messaging", "identity"])
            for replica in replicas {
                let ready = try await TestHTTP(baseURL: try replica.baseURL).get("/readyz")
                #expect(ready.status == 200, "\(ready.text)")
                await replica.stop(signal: SIGTERM)
                #expect(replica.exitStatus == 0)
            }
        }
    }
}
