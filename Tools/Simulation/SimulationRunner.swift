import Foundation
import SurgeCalendar
import SurgeContracts

/// What the simulation needs of a running stack: the gateway, and every clock moved together.
public protocol SimulationBackend: Sendable {
    /// A JSON request through the gateway, with the user's access token if any.
    func send(_ method: String, _ path: String, token: String?, json: [String: any Sendable]?) async throws -> SimulationResponse
    /// Moves every service's clock to `instant`; when `dayClosed` (a local day ended in some zone since the last move),
    /// returns only once the day judge has run at it.
    func setClock(_ instant: Date, dayClosed: Bool) async throws
    /// Returns once progress knows the user (it learns users from identity's events).
    func waitForUser(_ userID: UUID) async throws
    /// Returns once progress knows the definition (it learns them from challenges' events).
    func waitForDefinition(_ challengeID: String) async throws
}

public struct SimulationResponse: Sendable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }

    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct SimulationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension PopulationSimulation {
    /// 75 Hard's id in the curated content.
    public static let seventyFiveHard = "c4a11e00-0075-4000-8000-000000000001"

    public static let kpis = ["day7Retention", "challengeStartRate", "dailyCheckInRate", "completionRate", "averageStreakBeforeBreak", "restartRate"]

    /// Drives the whole population through the gateway, moving the clock moment by moment.
    public mutating func run(on backend: some SimulationBackend) async throws {
        try await backend.waitForDefinition(Self.seventyFiveHard)
        var previous: Date?
        for instant in instants {
            let dayClosed = previous.map { previous in
                Self.zones.contains { zone in
                    let calendar = LocalCalendar(zoneNamedOrUTC: zone)
                    return calendar.date(at: previous) != calendar.date(at: instant)
                }
            } ?? true
            try await backend.setClock(instant, dayClosed: dayClosed)
            previous = instant
            for day in 0..<days {
                for slot in Slot.allCases {
                    for index in users.indices where users[index].calendar.instant(of: LocalTime(slot.rawValue)!, on: firstDay.adding(days: day)) == instant {
                        for action in actions(of: users[index], day: day, slot: slot) {
                            try await perform(action, user: index, at: instant, on: backend)
                        }
                    }
                }
            }
        }
    }

    private mutating func perform(_ action: Action, user index: Int, at instant: Date, on backend: some SimulationBackend) async throws {
        var user = users[index]
        defer { users[index] = user }
        let today = user.calendar.date(at: instant)
        let token = user.token
        func send(_ method: String, _ path: String, _ json: [String: any Sendable]? = nil, expect status: Int) async throws -> SimulationResponse {
            let response = try await backend.send(method, path, token: token, json: json)
            guard response.status == status else {
                throw SimulationError("user \(user.index) (\(user.persona)) on \(today): \(method) \(path) answered \(response.status): \(response.text)")
            }
            return response
        }
        func attemptID(_ response: SimulationResponse) throws -> String {
            guard let id = (response.json["attempt"] as? [String: Any])?["attemptID"] as? String else { throw SimulationError("no attempt in \(response.text)") }
            return id
        }
        switch action {
        case .register:
            let response = try await send("POST", "/v1/auth/guest", ["displayName": "Sim \(user.index)", "timeZone": user.zone], expect: 201)
            guard let token = (response.json["tokens"] as? [String: Any])?["accessToken"] as? String,
                let id = ((response.json["user"] as? [String: Any])?["id"] as? String).flatMap(UUID.init(uuidString:))
            else { throw SimulationError("guest sign-up answered \(response.text)") }
            user.id = id
            user.token = token
            user.registeredAt = instant
            user.activities.append(instant)
            try await backend.waitForUser(id)
            if user.persona != .ghost && user.persona != .quitter {
                let created = try await backend.send(
                    "POST", "/v1/challenges", token: token,
                    json: [
                        "kind": "habit", "name": "Walk", "durationDays": Self.habitDays,
                        "tasks": [["taskID": "walk", "title": "Walk", "kind": "checkbox"] as [String: any Sendable]],
                        "rules": ["checkInGraceMinutes": 0] as [String: any Sendable],
                    ])
                guard let habitID = (created.json["definition"] as? [String: Any])?["challengeID"] as? String else {
                    throw SimulationError("habit not created: \(created.text)")
                }
                user.habitID = habitID
                try await backend.waitForDefinition(habitID)
            }
        case .startHabit, .startHard:
            guard let challengeID = action == .startHard ? Self.seventyFiveHard : user.habitID else { throw SimulationError("no habit to start") }
            let id = try attemptID(try await send("POST", "/v1/attempts", ["challengeID": challengeID], expect: 201))
            user.attempts.append(Attempt(id: id, challengeID: challengeID, strict: action == .startHard, startedOn: today, startedAt: instant))
            user.activities.append(instant)
        case .tick:
            guard let last = user.attempts.indices.last else { throw SimulationError("nothing to tick") }
            _ = try await send("PUT", "/v1/attempts/\(user.attempts[last].id)/tasks/walk", ["done": true], expect: 200)
            if user.attempts[last].ticks[today] == nil { user.attempts[last].ticks[today] = instant }
            user.activities.append(instant)
        case .restart:
            guard let last = user.attempts.indices.last else { throw SimulationError("nothing to restart") }
            let id = try attemptID(try await send("POST", "/v1/attempts/\(user.attempts[last].id)/restart", expect: 201))
            user.attempts[last].restartedAt = instant
            user.attempts.append(Attempt(id: id, challengeID: user.attempts[last].challengeID, strict: true, startedOn: today, startedAt: instant))
            user.activities.append(instant)
        case .abandon:
            guard let last = user.attempts.indices.last else { throw SimulationError("nothing to abandon") }
            _ = try await send("POST", "/v1/attempts/\(user.attempts[last].id)/abandon", expect: 200)
            user.attempts[last].abandonedOn = today
            user.attempts[last].abandonedAt = instant
            user.activities.append(instant)
        case .editProfile:
            _ = try await send("PATCH", "/v1/me", ["displayName": "Sim \(user.index) again"], expect: 200)
            user.activities.append(instant)
        case .optOut:
            _ = try await send("PUT", "/v1/me/preferences", ["notificationsEnabled": true, "telemetryOptOut": true], expect: 200)
            user.optedOutAt = instant
        case .delete:
            _ = try await send("DELETE", "/v1/me", ["confirm": true], expect: 204)
            user.deleted = true
        }
    }

    /// Where `GET /v1/admin/kpis` for the simulated days disagrees with the ground truth (empty when it agrees).
    public func mismatches(in report: [String: Any]) -> [String] {
        let expected = expected()
        var found: [String] = []
        let days = report["days"] as? [[String: Any]] ?? []
        if days.count != self.days { found.append("\(days.count) days reported, \(self.days) simulated") }
        for day in days {
            let date = LocalDate(day["date"] as? String ?? "") ?? firstDay
            let want = expected.days[date] ?? (0, [:])
            if day["registrations"] as? Int != want.registrations {
                found.append("registrations on \(date): projector \(day["registrations"] ?? "none"), ground truth \(want.registrations)")
            }
            found += Self.differences(Self.values(day["values"]), want.values, at: "on \(date)")
        }
        let weeks = report["cohortWeeks"] as? [[String: Any]] ?? []
        if weeks.count != expected.weeks.count { found.append("\(weeks.count) cohort weeks reported, \(expected.weeks.count) simulated") }
        for week in weeks {
            let start = LocalDate(week["week"] as? String ?? "") ?? firstDay
            let want = expected.weeks[start] ?? (0, [:])
            if week["users"] as? Int != want.users { found.append("users of cohort week \(start): projector \(week["users"] ?? "none"), ground truth \(want.users)") }
            found += Self.differences(Self.values(week["values"]), want.values, at: "of cohort week \(start)")
        }
        return found
    }

    /// The KPIs nobody in this population exercised (a larger population is needed to check them).
    public func unmeasured() -> [String] {
        let days = expected().days.values
        return Self.kpis.filter { kpi in !days.contains { ($0.values[kpi]?.denominator ?? 0) > 0 } }
    }

    /// One line per KPI: value, numerator/denominator and target, over the whole range.
    public static func summary(of report: [String: Any]) -> String {
        let totals = values(report["totals"])
        return kpis.map { kpi in
            let value = totals[kpi] ?? Value()
            let ratio = value.denominator > 0 ? String(format: "%.3f", Double(value.numerator) / Double(value.denominator)) : "—"
            return "\(kpi.padding(toLength: 26, withPad: " ", startingAt: 0)) \(ratio.padding(toLength: 7, withPad: " ", startingAt: 0)) \(value)"
        }.joined(separator: "\n")
    }

    static func values(_ json: Any?) -> Values {
        var values: Values = [:]
        for kpi in kpis {
            let value = (json as? [String: Any])?[kpi] as? [String: Any]
            values[kpi] = Value(numerator: value?["numerator"] as? Int ?? -1, denominator: value?["denominator"] as? Int ?? -1)
        }
        return values
    }

    static func differences(_ got: Values, _ want: Values, at place: String) -> [String] {
        kpis.compactMap { kpi in
            let expected = want[kpi] ?? Value()
            return got[kpi] == expected ? nil : "\(kpi) \(place): projector \(got[kpi] ?? Value()), ground truth \(expected)"
        }
    }
}
