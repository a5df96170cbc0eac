import Foundation
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeKafka
import SurgeMessaging
import SurgeTestSupport

/// Identity, challenges (with its curated content), progress (on a simulated clock, judging every 100 ms) and the
/// gateway, with helpers to create users, wait for definitions and move time.
struct ProgressStage {
    let stack: TestStack

    struct User {
        let id: UUID
        let http: TestHTTP
        let calendar: LocalCalendar
    }

    static func with(_ name: String, _ body: (ProgressStage) async throws -> Void) async throws {
        try await withTestStack(name) { stack in
            try await stack.start("identity")
            try await stack.start("challenges")
            try await stack.start("progress", environment: ["SIMULATED_CLOCK": "true", "JUDGEMENT_INTERVAL_MS": "100"])
            try await stack.start("gateway")
            try await body(ProgressStage(stack: stack))
        }
    }

    /// Waits until progress has a definition (published by challenges).
    func waitForDefinition(_ challengeID: String) async throws {
        let id = UUID(uuidString: challengeID)!
        try await waitUntil("progress knows \(challengeID)") {
            try await stack.database.count("SELECT count(*) FROM progress.definitions WHERE challenge_id = \(id)") >= 1
        }
    }

    /// Creates a habit through the challenges API (naming `badges` of its own, if any) and waits until progress has it.
    func habit(for user: User, graceMinutes: Int, badges: [[String: any Sendable]] = []) async throws -> String {
        var draft: [String: any Sendable] = [
            "kind": "habit", "name": "Sketch", "description": "Draw something",
            "tasks": [["taskID": "sketch", "title": "Sketch", "kind": "checkbox"] as [String: any Sendable]],
            "rules": ["points": ["kind": "perTask", "pointsPerTask": 5] as [String: any Sendable], "checkInGraceMinutes": graceMinutes] as [String: any Sendable],
            "habit": ["colour": "#FF8800", "priority": 2] as [String: any Sendable],
        ]
        if !badges.isEmpty { draft["badges"] = badges }
        let created = try await user.http.post("/v1/challenges", json: draft)
        guard created.status == 201, let id = (created.json["definition"] as? [String: Any])?["challengeID"] as? String else {
            throw StageError("habit not created: \(created.text)")
        }
        try await waitForDefinition(id)
        return id
    }

    /// A week-long water competition in litres created by `owner` from `start` (Rome time), with `invitees` invited
    /// (they must be the owner's friends) and any other `fields` of the definition (tasks, rules, badges); returns its
    /// id and its first task's id.
    func waterCompetition(
        owner: User, from start: Date, inviting invitees: [User], fields: [String: any Sendable] = [:]
    ) async throws -> (id: String, taskID: String) {
        var draft: [String: any Sendable] = [
            "kind": "competition", "name": "Most water", "description": "Litres in a week",
            "competition": [
                "startsAt": Timestamp.format(start), "endsAt": Timestamp.format(start.addingTimeInterval(7 * 86_400)),
                "timeZone": "Europe/Rome", "unit": "litres",
            ] as [String: any Sendable],
        ]
        draft.merge(fields) { _, field in field }
        let created = try await owner.http.post("/v1/challenges", json: draft)
        guard let definition = created.json["definition"] as? [String: Any], let id = definition["challengeID"] as? String,
            let taskID = (definition["tasks"] as? [[String: Any]])?.first?["taskID"] as? String
        else { throw StageError("competition not created: \(created.text)") }
        let invited = try await owner.http.post("/v1/challenges/\(id)/invitations", json: ["userIDs": invitees.map(\.id.uuidString)])
        guard invited.status == 201 else { throw StageError("invitations refused: \(invited.text)") }
        return (id, taskID)
    }

    /// `a` asks `b` to be friends and `b` accepts.
    func befriend(_ a: User, _ b: User) async throws {
        let request = try await a.http.post("/v1/friend-requests", json: ["userID": b.id.uuidString])
        guard let requestID = request.json["id"] as? String,
            try await b.http.post("/v1/friend-requests/\(requestID)/accept").status == 200
        else { throw StageError("friendship not made: \(request.text)") }
    }

    /// A household created by `owner` through identity, joined by `members`; returns its id once challenges and
    /// progress know every member.
    func household(owner: User, members: [User], timeZone: String) async throws -> String {
        let group = try await owner.http.post("/v1/groups", json: ["name": "Home", "kind": "household", "timeZone": timeZone])
        guard group.status == 201, let id = group.json["id"] as? String else { throw StageError("household: \(group.text)") }
        for member in members {
            guard let code = try await owner.http.post("/v1/groups/\(id)/invites").json["code"] as? String,
                try await member.http.post("/v1/groups/join", json: ["code": code]).status == 200
            else { throw StageError("could not join the household") }
        }
        let groupID = UUID(uuidString: id)!
        try await waitUntil("challenges and progress know the household") {
            let challenges = try await stack.database.count("SELECT count(*) FROM challenges.group_members WHERE group_id = \(groupID)")
            let progress = try await stack.database.count("SELECT count(*) FROM progress.group_members WHERE group_id = \(groupID)")
            return challenges == members.count + 1 && progress == members.count + 1
        }
        return id
    }

    /// A guest in `timeZone`, known to progress.
    func user(_ name: String, timeZone: String) async throws -> User {
        let response = try await stack.http().post("/v1/auth/guest", json: ["displayName": name, "timeZone": timeZone])
        guard response.status == 201,
            let token = (response.json["tokens"] as? [String: Any])?["accessToken"] as? String,
            let id = ((response.json["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
        else { throw StageError("guest sign-up failed: \(response.text)") }
        try await waitUntil("progress knows \(name)") {
            try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(id)") == 1
        }
        return User(id: id, http: try stack.http().authorized(token), calendar: LocalCalendar(zoneNamed: timeZone)!)
    }

    /// Moves progress's clock to a local wall-clock time of `user`.
    func setClock(_ date: LocalDate, _ time: String, for user: User) async throws {
        try await setClock(user.calendar.instant(of: LocalTime(time)!, on: date))
    }

    func setClock(_ instant: Date) async throws {
        try await stack.setClock(instant)
    }

    /// Waits until the day judge has completed two more rounds: one that was under way may have read the time before
    /// the clock moved, the next has certainly judged at the new time.
    func waitForJudgement() async throws {
        let progress = try stack.process("progress")
        let before = try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total")
        try await waitUntil("two day-judgement rounds") {
            try await MetricsPage.scrape(progress).sum("surge_judgement_rounds_total") >= before + 2
        }
    }

    /// The progress outbox's event types, in order.
    func eventTypes() async throws -> [String] {
        try await stack.database.withAdmin { client in
            try await client.query("SELECT type FROM progress.outbox ORDER BY position", logger: .test("stage")).collect().map { try $0.decode(String.self) }
        }
    }
}

struct StageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The curated content's fixed ids, and a photo.
enum Fixtures {
    static let seventyFiveHard = "c4a11e00-0075-4000-8000-000000000001"
    static let dailyPushUps = "c4a11e00-0000-4000-8000-000000000006"
    static let weeklyPushUps = "c4a11e00-0007-4000-8000-000000000007"

    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [UInt8](repeating: 7, count: 64))
}
