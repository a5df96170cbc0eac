import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

/// Scaling one service out, as an operator does with `--scale progress=3 --scale leaderboard=2`: replicas as separate
/// processes, the gateway spreading requests over them, the consumer groups dividing the partitions.
@Suite("Scaling: replicas behind the gateway", .tags(.system), .kind(.system), .serialized)
struct ScalingSystemTests {
    typealias User = ProgressStage.User

    /// The test stack's `session.timeout.ms` (`TestStack.environment`): how long the broker waits before it gives a
    /// silent member's partitions to the others.
    static let sessionTimeout: Duration = .seconds(6)

    /// Partitions each live replica of `group` owns, by instance.
    func assignments(_ stack: TestStack, _ instances: [String], group: String) async throws -> [String: Int] {
        var owned: [String: Int] = [:]
        for instance in instances {
            owned[instance] = Int(try await MetricsPage.scrape(try stack.process(instance)).sum("surge_kafka_assigned_partitions", ["group": group]))
        }
        return owned
    }

    /// Waits until every replica in `instances` owns partitions and together they own `total`.
    func waitForBalance(_ stack: TestStack, _ instances: [String], group: String, total: Int, timeout: Duration = .seconds(30)) async throws -> [String: Int] {
        try await eventually("\(instances) share the \(total) partitions of \(group)", timeout: timeout, every: .milliseconds(100)) {
            let owned = try await assignments(stack, instances, group: group)
            return owned.values.allSatisfy({ $0 > 0 }) && owned.values.reduce(0, +) == total ? owned : nil
        }
    }

    /// How long after `since` the replicas in `instances` own all `total` partitions of `group` between them.
    func takeover(_ stack: TestStack, _ instances: [String], group: String, total: Int, since: ContinuousClock.Instant) async throws -> Duration {
        _ = try await waitForBalance(stack, instances, group: group, total: total)
        return ContinuousClock.now - since
    }

    /// Starts one replica, waits until it alone owns every partition of its group and returns that number.
    func soleOwnerPartitions(_ stack: TestStack, _ instance: String, group: String) async throws -> Int {
        let first = try await eventually("\(instance) owns partitions", timeout: .seconds(30)) { () -> Int? in
            let owned = try await assignments(stack, [instance], group: group)[instance] ?? 0
            return owned > 0 ? owned : nil
        }
        // The first assignment is the whole subscription (one member); it never grows afterwards.
        return first
    }

    @Test(
        "three progress and two leaderboard replicas: requests spread, each event applied once, every partition consumed; after kill -9 of one of each, the survivors take the partitions over within the session timeout and nothing is lost"
    )
    func scaleOutAndLoseAReplica() async throws {
        try await withTestStack("scaling") { stack in
            let clock = ["SIMULATED_CLOCK": "true"]
            try await stack.start("identity")
            try await stack.start("challenges", environment: clock)
            try await stack.start("progress", environment: clock.merging(["JUDGEMENT_INTERVAL_MS": "100"]) { $1 })
            try await stack.start("leaderboard", environment: clock.merging(["WINDOW_CLOSE_INTERVAL_MS": "100"]) { $1 })
            let progressPartitions = try await soleOwnerPartitions(stack, "progress", group: "surge-progress")
            let leaderboardPartitions = try await soleOwnerPartitions(stack, "leaderboard", group: "surge-leaderboard")
            for instance in ["progress-2", "progress-3"] {
                try await stack.start("progress", instance: instance, environment: clock.merging(["JUDGEMENT_INTERVAL_MS": "100"]) { $1 })
            }
            try await stack.start("leaderboard", instance: "leaderboard-2", environment: clock.merging(["WINDOW_CLOSE_INTERVAL_MS": "100"]) { $1 })
            let progress = ["progress", "progress-2", "progress-3"]
            let leaderboard = ["leaderboard", "leaderboard-2"]
            try await stack.start("gateway", environment: [
                "UPSTREAM_PROGRESS_URL": try progress.map { try stack.process($0).baseURL }.joined(separator: ","),
                "UPSTREAM_LEADERBOARD_URL": try leaderboard.map { try stack.process($0).baseURL }.joined(separator: ","),
            ])
            _ = try await waitForBalance(stack, progress, group: "surge-progress", total: progressPartitions)
            _ = try await waitForBalance(stack, leaderboard, group: "surge-leaderboard", total: leaderboardPartitions)

            // A week-long water competition: twelve people log litres through the gateway.
            let stage = ProgressStage(stack: stack)
            let start = Timestamp.parse("2026-11-23T08:00:00Z")!
            try await stack.setClock(start.addingTimeInterval(-3600))
            let host = try await stage.user("Host", timeZone: "Europe/Rome")
            var users = [host]
            for index in 1..<12 {
                let drinker = try await stage.user("Drinker \(index)", timeZone: "Asia/Tokyo")
                try await stage.befriend(host, drinker)
                users.append(drinker)
            }
            let (competitionID, taskID) = try await stage.waterCompetition(owner: host, from: start, inviting: Array(users.dropFirst()))
            try await stage.waitForDefinition(competitionID)
            try await stack.setClock(start.addingTimeInterval(3600))

            var attempts: [UUID: String] = [:]
            for user in users {
                let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": competitionID])
                attempts[user.id] = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
            }
            var expected: [String: Double] = [:]
            var logged = 0
            func logRound(_ round: Int) async throws {
                for (index, user) in users.enumerated() {
                    let litres = Double(index % 4) * 0.5 + Double(round) * 0.25 + 0.25
                    let response = try await user.http.post("/v1/attempts/\(attempts[user.id]!)/tasks/\(taskID)/logs", json: ["quantity": litres])
                    #expect(response.status == 201, "\(response.text)")
                    let name = index == 0 ? "Host" : "Drinker \(index)"
                    expected[name, default: 0] += litres
                    logged += 1
                }
            }
            for round in 0..<3 { try await logRound(round) }

            // The gateway spread the writes over the three progress replicas.
            for instance in progress {
                let served = try await MetricsPage.scrape(try stack.process(instance)).sum(
                    "hb_requests_total", ["http_request_method": "POST", "http_response_status_code": "201"])
                #expect(served > 0, "\(instance) served no write")
            }
            let path = "/v1/leaderboards/challenges/\(competitionID)?window=all-time&limit=50"
            func standings() async throws -> [String: Double] {
                let items = try await host.http.get(path).json["items"] as? [[String: Any]] ?? []
                return Dictionary(items.map { ($0["displayName"] as? String ?? "?", $0["score"] as? Double ?? -1) }) { first, _ in first }
            }
            let before = expected
            _ = try await eventually("the board counts every litre logged so far") { try await standings() == before ? true : nil }

            // kill -9 one replica of each: no LeaveGroup, so the broker notices only when its session times out.
            try await stack.process("progress-2").crash()
            try await stack.process("leaderboard").crash()
            let killed = ContinuousClock.now
            let survivingProgress = ["progress", "progress-3"]
            let survivingLeaderboard = ["leaderboard-2"]
            async let progressTakeover = takeover(stack, survivingProgress, group: "surge-progress", total: progressPartitions, since: killed)
            async let leaderboardTakeover = takeover(
                stack, survivingLeaderboard, group: "surge-leaderboard", total: leaderboardPartitions, since: killed)
            // Writes go on meanwhile: the gateway skips the dead replica, the events wait on their partitions.
            for round in 3..<6 { try await logRound(round) }
            for (group, took) in [("surge-progress", try await progressTakeover), ("surge-leaderboard", try await leaderboardTakeover)] {
                print("scaling: after kill -9, the survivors of \(group) owned every partition in \(took) (session timeout \(Self.sessionTimeout))")
                // The broker notices the dead member when its session times out; a rebalance then hands its partitions
                // over. librdkafka's mock broker lets each rebalance round wait about 3 s for members to rejoin, and a
                // survivor busy with a batch joins a round late (measured here: revoked 6 s after the kill, reassigned
                // 5-10 s later, up to 15 s with the whole suite on two cores); a real broker does not wait. The bound
                // allows four such rounds.
                #expect(took < Self.sessionTimeout + .seconds(18), "\(group) took \(took)")
            }

            let all = expected
            _ = try await eventually("the board counts every litre, once", timeout: .seconds(30)) { try await standings() == all ? true : nil }
            let logs = try await stack.database.count("SELECT count(*) FROM progress.checkins WHERE quantity IS NOT NULL")
            #expect(logs == logged)
            let applied = try await stack.database.count(
                "SELECT count(*) FROM leaderboard.processed_events WHERE event_type = 'surge.progress.checkin.recorded.v1'")
            #expect(applied == logged)
            // Caught up: the survivors report no records waiting on any partition.
            for instance in survivingProgress + survivingLeaderboard {
                try await waitUntil("\(instance) reports no consumer lag", timeout: .seconds(30)) {
                    let page = try await MetricsPage.scrape(try stack.process(instance))
                    return page.text.contains("surge_kafka_consumer_lag{") && page.sum("surge_kafka_consumer_lag") == 0
                }
            }
        }
    }
}
