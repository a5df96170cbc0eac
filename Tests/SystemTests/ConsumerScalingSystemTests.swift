import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

/// The replica counts the deployment files assume (two of each service, `ServiceEntry.Deployment`), proven for every
/// consumer group that `ScalingSystemTests` (progress ×3, leaderboard ×2) does not cover: challenges, badges,
/// notifications, analytics and the gateway (its group records revoked sessions). Identity runs no consumer. Two
/// replicas of each divide their group's partitions and each applies its share; after kill -9 of one replica of each,
/// all at once, the survivors take every partition over within the bound `ScalingSystemTests` allows, and every event
/// is applied exactly once: counted in each service's tables and read through the public API.
@Suite("Scaling: two replicas of every other consumer service", .tags(.system), .kind(.system), .serialized)
struct ConsumerScalingSystemTests {
    typealias User = ProgressStage.User

    /// One scaled service: its two replicas and the one killed (a mix of first and second, so the gateway must skip
    /// either).
    struct Scaled: Sendable {
        let service: SurgeService
        let killed: String

        var group: String { service.consumerGroup }
        var replicas: [String] { [service.rawValue, service.rawValue + "-2"] }
        var survivor: String { replicas.first { $0 != killed }! }
    }

    static let scaled = [
        Scaled(service: .challenges, killed: "challenges"),
        Scaled(service: .badges, killed: "badges-2"),
        Scaled(service: .notifications, killed: "notifications"),
        Scaled(service: .analytics, killed: "analytics-2"),
        // The test's requests go through the first gateway replica.
        Scaled(service: .gateway, killed: "gateway-2"),
    ]

    /// Per group, the event types of which it must apply every event written, once. Only types it handles without a
    /// `when` filter: a passed-over event's `processed_events` row is written lazily, and a kill -9 may lose it
    /// (harmlessly, `PassedOverEvents`).
    static let applied: [String: [String]] = [
        SurgeService.challenges.consumerGroup: [UserRegistered.eventType, FriendshipChanged.eventType, AttemptStarted.eventType],
        SurgeService.badges.consumerGroup: [UserRegistered.eventType, AttemptStarted.eventType, CheckInRecorded.eventType],
        SurgeService.notifications.consumerGroup: [
            UserRegistered.eventType, FriendshipChanged.eventType, AttemptStarted.eventType, CheckInRecorded.eventType, BadgeAwarded.eventType,
        ],
        SurgeService.analytics.consumerGroup: [UserRegistered.eventType, AttemptStarted.eventType, CheckInRecorded.eventType],
        SurgeService.gateway.consumerGroup: [SessionsRevoked.eventType],
    ]

    /// The schema whose outbox writes each of those types.
    static let producer: [String: String] = [
        UserRegistered.eventType: "identity", FriendshipChanged.eventType: "identity", SessionsRevoked.eventType: "identity",
        AttemptStarted.eventType: "progress", CheckInRecorded.eventType: "progress", BadgeAwarded.eventType: "badges",
    ]

    /// The partition helpers and the takeover bound of the model test.
    let scaling = ScalingSystemTests()

    /// What the workload did, tallied as it goes: what every count at the end is checked against.
    struct Tally {
        var users: [User] = []
        var attempts: [UUID: String] = [:]
        /// Every registered user's id (guests, the analyst).
        var registered: [UUID] = []
        var friendships = 0
        var checkIns = 0
        /// Access tokens of guests who signed out.
        var signedOut: [String] = []
    }

    /// Applied events per replica of `scaled`'s group (`surge_events_handled_total{result="applied"}`).
    func appliedByReplica(_ stack: TestStack, _ scaled: Scaled, replicas: [String]? = nil) async throws -> [String: Int] {
        var applied: [String: Int] = [:]
        for replica in replicas ?? scaled.replicas {
            applied[replica] = Int(
                try await MetricsPage.scrape(try stack.process(replica)).sum("surge_events_handled_total", ["consumer": scaled.group, "result": "applied"]))
        }
        return applied
    }

    /// What is not applied yet: per group and type, "applied of written", and records parked in any schema; empty once
    /// every group has caught up with every event of its types.
    func behind(_ stack: TestStack) async throws -> [String] {
        try await stack.database.withAdmin { client in
            var behind: [String] = []
            var written: [String: Int] = [:]
            for (type, schema) in Self.producer {
                written[type] = try await client.query(
                    "SELECT count(*) FROM \(unescaped: schema).outbox WHERE type = \(type)", logger: .test("scaling")
                ).collect().first?.decode(Int.self) ?? 0
            }
            for scaled in Self.scaled {
                for type in Self.applied[scaled.group]! {
                    let applied = try await client.query(
                        "SELECT count(*) FROM \(unescaped: scaled.service.schema).processed_events WHERE consumer = \(scaled.group) AND event_type = \(type)",
                        logger: .test("scaling")
                    ).collect().first?.decode(Int.self) ?? 0
                    if applied != written[type] { behind.append("\(scaled.group): \(applied) of \(written[type] ?? 0) \(type)") }
                }
                let parked = try await client.query(
                    "SELECT count(*) FROM \(unescaped: scaled.service.schema).deferred_events", logger: .test("scaling")
                ).collect().first?.decode(Int.self) ?? 0
                if parked > 0 { behind.append("\(scaled.group): \(parked) parked") }
            }
            return behind
        }
    }

    func waitUntilCaughtUp(_ stack: TestStack, _ what: String) async throws {
        var last: [String] = []
        do {
            try await waitUntil(what, timeout: .seconds(60), every: .milliseconds(200)) {
                last = try await behind(stack)
                return last.isEmpty
            }
        } catch {
            Issue.record("still behind: \(last)")
            throw error
        }
    }

    /// The id of the user a sign-up answer names.
    static func userID(_ response: TestResponse) -> UUID? {
        ((response.json["user"] as? [String: Any])?["id"] as? String).flatMap { UUID(uuidString: $0) }
    }

    /// A guest who signs straight out: a `user.registered` for every group but the gateway's, a `sessions.revoked` for
    /// the gateway's.
    func passerBy(_ stack: TestStack, _ tally: inout Tally) async throws {
        let guest = try await stack.http().post("/v1/auth/guest", json: ["displayName": "Passer-by \(tally.signedOut.count)", "timeZone": "Europe/Lisbon"])
        let tokens = guest.json["tokens"] as? [String: Any]
        let access = try #require(tokens?["accessToken"] as? String, "\(guest.text)")
        let refresh = try #require(tokens?["refreshToken"] as? String, "\(guest.text)")
        let id = try #require(Self.userID(guest), "\(guest.text)")
        tally.registered.append(id)
        let signedOut = try await stack.http().post("/v1/auth/sign-out", json: ["refreshToken": refresh])
        #expect(signedOut.status == 204, "\(signedOut.text)")
        tally.signedOut.append(access)
    }

    /// A user who becomes `host`'s friend (a friend request, then accepted) and starts the curated daily push-ups.
    func newcomer(_ stage: ProgressStage, _ name: String, timeZone: String, host: User?, _ tally: inout Tally) async throws -> User {
        let user = try await stage.user(name, timeZone: timeZone)
        tally.registered.append(user.id)
        if let host {
            try await stage.befriend(host, user)
            tally.friendships += 1
        }
        let attempt = try await user.http.post("/v1/attempts", json: ["challengeID": Fixtures.dailyPushUps])
        tally.attempts[user.id] = try #require((attempt.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(attempt.text)")
        tally.users.append(user)
        return user
    }

    /// `user` logs push-ups `times` times: each a `checkin.recorded`; the user's first earns the "check-ins" badge.
    func logPushUps(_ user: User, times: Int, _ tally: inout Tally) async throws {
        for index in 0..<times {
            let logged = try await user.http.post("/v1/attempts/\(tally.attempts[user.id]!)/tasks/push-ups/logs", json: ["quantity": 5 + index])
            #expect(logged.status == 201, "\(logged.text)")
            tally.checkIns += 1
        }
    }

    @Test(
        "two replicas each of challenges, badges, notifications, analytics and the gateway share their groups' partitions and work; after kill -9 of one of each at once, the survivors own every partition within the bound and every event is applied exactly once"
    )
    func everyConsumerGroupScaledOutAndLosingAReplica() async throws {
        let began = ContinuousClock.now
        try await withTestStack("consumer-scaling") { stack in
            let scaling = self.scaling
            let consumers = Self.scaled.filter { $0.service != .gateway }
            // The first replicas, identity and progress at once; then, as each group's first replica owns the whole
            // subscription (its size), its second replica.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await stack.start("identity", environment: ["BCRYPT_COST": "4"]) }
                group.addTask { try await stack.start("progress") }
                for scaled in consumers { group.addTask { try await stack.start(scaled.service.rawValue) } }
                try await group.waitForAll()
            }
            var totals = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for scaled in consumers {
                    group.addTask {
                        let total = try await scaling.soleOwnerPartitions(stack, scaled.replicas[0], group: scaled.group)
                        try await stack.start(scaled.service.rawValue, instance: scaled.replicas[1])
                        return (scaled.group, total)
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1.0] = $1.1 }
            }
            // Two gateways, each routing to both replicas of every scaled service.
            var upstreams: [String: String] = [:]
            for scaled in consumers {
                upstreams["UPSTREAM_\(scaled.service.rawValue.uppercased())_URL"] = try scaled.replicas.map { try stack.process($0).baseURL }.joined(separator: ",")
            }
            try await stack.start("gateway", environment: upstreams)
            totals[SurgeService.gateway.consumerGroup] = try await scaling.soleOwnerPartitions(stack, "gateway", group: SurgeService.gateway.consumerGroup)
            try await stack.start("gateway", instance: "gateway-2", environment: upstreams)
            let partitions = totals
            let owned = try await withThrowingTaskGroup(of: (String, [String: Int]).self) { group in
                for scaled in Self.scaled {
                    group.addTask {
                        (scaled.group, try await scaling.waitForBalance(stack, scaled.replicas, group: scaled.group, total: partitions[scaled.group]!))
                    }
                }
                return try await group.reduce(into: [String: [String: Int]]()) { $0[$1.0] = $1.1 }
            }
            print("consumer scaling: stack up and balanced after \(ContinuousClock.now - began): \(owned.sorted { $0.key < $1.key })")

            // Before the kill: a host and six friends start the daily push-ups and log three times each; six guests
            // sign out.
            let stage = ProgressStage(stack: stack)
            try await stage.waitForDefinition(Fixtures.dailyPushUps)
            var tally = Tally()
            let zones = ["Europe/Rome", "Asia/Tokyo", "America/New_York", "Europe/London"]
            let host = try await newcomer(stage, "Host", timeZone: "Europe/Rome", host: nil, &tally)
            for index in 1...6 {
                _ = try await newcomer(stage, "Early \(index)", timeZone: zones[index % zones.count], host: host, &tally)
            }
            for user in tally.users { try await logPushUps(user, times: 3, &tally) }
            for _ in 0..<6 { try await passerBy(stack, &tally) }

            // Each replica applied a share. Which partitions an event lands on is the key's hash: should one replica's
            // partitions have got none of a group's events yet, more guests sign out (each is an event for every group).
            var shares: [String: [String: Int]] = [:]
            for topUp in 0...20 {
                try await waitUntilCaughtUp(stack, "every group applied the events before the kill")
                for scaled in Self.scaled { shares[scaled.group] = try await appliedByReplica(stack, scaled) }
                if shares.values.allSatisfy({ $0.values.allSatisfy { $0 > 0 } }) || topUp == 20 { break }
                try await passerBy(stack, &tally)
            }
            for scaled in Self.scaled {
                for replica in scaled.replicas {
                    #expect(shares[scaled.group]?[replica] ?? 0 > 0, "\(replica) applied none of \(scaled.group)'s events: \(shares[scaled.group] ?? [:])")
                }
                print("consumer scaling: before the kill, \(scaled.group) applied \(shares[scaled.group]!.sorted { $0.key < $1.key }) on partitions \(owned[scaled.group]!.sorted { $0.key < $1.key })")
            }

            // kill -9 one replica of each, at once: no LeaveGroup, the broker notices when each session times out.
            await withTaskGroup(of: Void.self) { group in
                for scaled in Self.scaled {
                    let process = try? stack.process(scaled.killed)
                    group.addTask { await process?.crash() }
                }
            }
            let killed = ContinuousClock.now
            async let takeovers = withThrowingTaskGroup(of: (String, Duration).self) { group in
                for scaled in Self.scaled {
                    group.addTask {
                        (scaled.group, try await scaling.takeover(stack, [scaled.survivor], group: scaled.group, total: partitions[scaled.group]!, since: killed))
                    }
                }
                return try await group.reduce(into: [String: Duration]()) { $0[$1.0] = $1.1 }
            }
            // Writes go on meanwhile: five newcomers (registrations, friendships, attempts, first check-ins and so badges),
            // one more log from everyone before, six more sign-outs; and an analyst for the KPIs.
            let early = tally.users
            for index in 1...5 {
                let user = try await newcomer(stage, "Late \(index)", timeZone: zones[(index + 1) % zones.count], host: host, &tally)
                try await logPushUps(user, times: 3, &tally)
            }
            for user in early { try await logPushUps(user, times: 1, &tally) }
            for _ in 0..<6 { try await passerBy(stack, &tally) }
            let analyst = try await analyst(stack, &tally)

            let took = try await takeovers
            for scaled in Self.scaled {
                let duration = try #require(took[scaled.group])
                print("consumer scaling: after kill -9 of \(scaled.killed), \(scaled.survivor) owned every partition of \(scaled.group) in \(duration) (session timeout \(ScalingSystemTests.sessionTimeout))")
                // The bound of `ScalingSystemTests` (its comment says why it is more than the session timeout).
                #expect(duration < ScalingSystemTests.sessionTimeout + .seconds(18), "\(scaled.group) took \(duration)")
            }

            // Everything written was applied by every group that handles it, and nothing is parked; the survivors have
            // consumed every partition to its end (so badges has applied the types it filters too, and published the
            // awards those earn), and what that published was applied in turn.
            try await waitUntilCaughtUp(stack, "the survivors applied every event")
            for scaled in Self.scaled {
                try await waitUntil("\(scaled.survivor) reports no consumer lag", timeout: .seconds(30)) {
                    let page = try await MetricsPage.scrape(try stack.process(scaled.survivor))
                    return page.text.contains("surge_kafka_consumer_lag{") && page.sum("surge_kafka_consumer_lag", ["group": scaled.group]) == 0
                }
            }
            try await waitUntilCaughtUp(stack, "the survivors applied what applying published")
            let database = stack.database
            let everyone = tally.registered
            let loggers = tally.users.count
            func outbox(_ schema: String, _ type: String, _ filter: String = "") async throws -> Int {
                try await database.count("SELECT count(*) FROM \(unescaped: schema).outbox WHERE type = \(type) \(unescaped: filter)")
            }
            // What was written is what the workload did (so the groups' counts below are against the workload).
            #expect(try await outbox("identity", UserRegistered.eventType) == everyone.count)
            #expect(try await outbox("identity", FriendshipChanged.eventType) == 2 * tally.friendships, "requested and accepted")
            #expect(try await outbox("identity", SessionsRevoked.eventType) == tally.signedOut.count)
            #expect(try await outbox("progress", AttemptStarted.eventType) == tally.attempts.count)
            #expect(try await outbox("progress", CheckInRecorded.eventType) == tally.checkIns)
            // Each award published once (an award applied twice would publish twice), the first check-in's among them
            // (the week's goal, reached by some, earns its own).
            #expect(try await outbox("badges", BadgeAwarded.eventType) == database.count("SELECT count(*) FROM badges.awards"))
            #expect(try await outbox("badges", BadgeAwarded.eventType, "AND payload->>'badgeID' = 'check-ins'") == loggers)

            // Effects, each counted where a second application would show.
            let pushUps = UUID(uuidString: Fixtures.dailyPushUps)!
            #expect(try await database.count("SELECT count(*) FROM challenges.users WHERE user_id = ANY(\(everyone))") == everyone.count)
            #expect(try await database.count("SELECT count(*) FROM challenges.friendships") == tally.friendships)
            #expect(
                try await database.count("SELECT COALESCE(sum(joins), 0)::bigint FROM challenges.challenge_activity WHERE challenge_id = \(pushUps)")
                    == tally.attempts.count, "each join counted once for trending")
            #expect(try await database.count("SELECT count(*) FROM badges.users WHERE user_id = ANY(\(everyone))") == everyone.count)
            #expect(
                try await database.count("SELECT COALESCE(sum(value), 0)::bigint FROM badges.facts WHERE name = 'check-ins' AND scope = ''")
                    == tally.checkIns, "each check-in counted once")
            #expect(try await database.count("SELECT count(*) FROM badges.awards WHERE badge_id = 'check-ins'") == loggers)
            #expect(try await database.count("SELECT count(*) FROM badges.participants WHERE challenge_id = \(pushUps)") == loggers)
            #expect(try await database.count("SELECT count(*) FROM notifications.recipients WHERE user_id = ANY(\(everyone))") == everyone.count)
            #expect(
                try await database.count("SELECT count(*) FROM notifications.inbox WHERE kind = 'badge-earned'")
                    == outbox("badges", BadgeAwarded.eventType, "AND NOT (payload->>'backfilled')::boolean"), "every award told once")
            #expect(try await database.count("SELECT count(*) FROM notifications.inbox WHERE key LIKE 'badge:check-ins:1:%'") == loggers)
            #expect(try await database.count("SELECT count(*) FROM notifications.inbox WHERE kind = 'friend-request'") == tally.friendships)
            #expect(try await database.count("SELECT count(*) FROM analytics.users WHERE user_id = ANY(\(everyone))") == everyone.count)
            #expect(try await database.count("SELECT count(*) FROM analytics.attempts WHERE started_at IS NOT NULL") == tally.attempts.count)
            #expect(try await database.count("SELECT count(*) FROM gateway.revoked_sessions") == tally.signedOut.count)

            // Through the public API: each user's badge and notifications once; the KPIs count every registration; a
            // signed-out guest's access token is refused.
            for user in tally.users {
                let badges = try await user.http.get("/v1/me/badges")
                let earned = (badges.json["earned"] as? [[String: Any]] ?? []).filter { $0["badgeID"] as? String == "check-ins" }
                #expect(earned.map { $0["level"] as? Int } == [1], "\(badges.text)")
                let items = try await user.http.get("/v1/me/notifications").json["items"] as? [[String: Any]] ?? []
                let told = items.filter { $0["kind"] as? String == "badge-earned" }
                #expect(told.filter { ($0["body"] as? String)?.contains("First check-in") == true }.count == 1, "\(items)")
                #expect(told.count == (try await database.count("SELECT count(*) FROM badges.awards WHERE user_id = \(user.id) AND NOT backfilled")), "\(items)")
                #expect(items.filter { $0["kind"] as? String == "friend-request" }.count == (user.id == host.id ? 0 : 1), "\(items)")
            }
            let today = LocalCalendar.utc.date(at: Date())
            let kpis = try await analyst.get("/v1/admin/kpis?from=\(today.adding(days: -2))&to=\(today.adding(days: 2))")
            #expect(kpis.status == 200, "\(kpis.text)")
            let registrations = (kpis.json["days"] as? [[String: Any]] ?? []).reduce(0) { $0 + ($1["registrations"] as? Int ?? 0) }
            #expect(registrations == everyone.count, "\(kpis.text)")
            for token in tally.signedOut {
                try await waitUntil("a signed-out guest's access token is refused") { try await stack.http().authorized(token).get("/v1/me").status == 401 }
            }

            // The survivors dead-lettered nothing; what the killed replicas had applied and not committed came again and
            // was found in the inbox.
            for scaled in Self.scaled {
                let page = try await MetricsPage.scrape(try stack.process(scaled.survivor))
                #expect(page.sum("surge_events_handled_total", ["consumer": scaled.group, "result": "deadlettered"]) == 0)
                let redelivered = page.sum("surge_events_handled_total", ["consumer": scaled.group, "result": "duplicate"])
                print("consumer scaling: \(scaled.survivor) found \(Int(redelivered)) redelivered events of \(scaled.group) already applied")
            }
        }
        print("consumer scaling: the test took \(ContinuousClock.now - began)")
    }

    /// A password account made an admin (`surge-admin grant-admin`), signed in: it may read the KPIs.
    func analyst(_ stack: TestStack, _ tally: inout Tally) async throws -> TestHTTP {
        let credentials: [String: any Sendable] = ["email": "scaling.analyst@example.com", "password": "two of everything, please"]
        let registered = try await stack.http().post(
            "/v1/auth/register", json: credentials.merging(["displayName": "Analyst", "timeZone": "UTC"]) { first, _ in first })
        let id = try #require(Self.userID(registered), "\(registered.text)")
        tally.registered.append(id)
        let granted = try await runSurgeAdmin(["grant-admin", "--email", "scaling.analyst@example.com", "--database", stack.database.name])
        #expect(granted.status == 0, "\(granted.output)")
        let signedIn = try await stack.http().post("/v1/auth/sign-in", json: credentials)
        let token = try #require((signedIn.json["tokens"] as? [String: Any])?["accessToken"] as? String, "\(signedIn.text)")
        return try stack.http().authorized(token)
    }
}
