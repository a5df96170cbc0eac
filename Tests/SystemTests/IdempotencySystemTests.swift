import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

/// Issue 44: idempotency end to end. The gateway releases a key when the service's connection breaks, since it cannot
/// know whether the command was committed; the service, which does know, answers the retry with the first answer.
@Suite("Idempotency: a keyed command runs once, whatever fails on the way", .tags(.system), .kind(.system), .serialized)
struct IdempotencySystemTests {
    static let keyHeader = InternalHeaders.idempotencyKey.rawName

    /// Sarah on day 1 of 75 Hard (a checkbox task `workouts`, a quantity task `water`).
    static func sarah(_ stage: ProgressStage) async throws -> (user: ProgressStage.User, attemptID: String) {
        try await stage.waitForDefinition(Fixtures.seventyFiveHard)
        let sarah = try await stage.user("Sarah", timeZone: "Europe/London")
        try await stage.setClock(LocalDate("2026-03-01")!, "08:00", for: sarah)
        let started = try await sarah.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
        let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String, "\(started.text)")
        return (sarah, attemptID)
    }

    @Test("a keyed request the gateway forwards again (its first answer lost) is answered from the first: one log, one tick, one challenge, one group")
    func forwardedAgain() async throws {
        try await ProgressStage.with("keyed-again") { stage in
            let (sarah, attemptID) = try await Self.sarah(stage)
            let progress = try stage.stack.signedHTTP("progress", caller: sarah.id.key)
            let attempt = UUID(uuidString: attemptID)!

            let log = "/v1/attempts/\(attemptID)/tasks/water/logs"
            let first = try await progress.post(log, json: ["quantity": 1.5], headers: [(Self.keyHeader, "log-1")])
            #expect(first.status == 201, "\(first.text)")
            let again = try await progress.post(log, json: ["quantity": 1.5], headers: [(Self.keyHeader, "log-1")])
            #expect(again.status == 201, "\(again.text)")
            #expect(again.json["logID"] as? String == first.json["logID"] as? String)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(again.body == first.body)
            let logs = try await stage.stack.database.count(
                "SELECT count(*) FROM progress.checkins WHERE attempt_id = \(attempt) AND action = 'logged'")
            #expect(logs == 1)
            let ledger = try await stage.stack.database.count("SELECT count(*) FROM progress.checkins WHERE attempt_id = \(attempt)")
            #expect(ledger == 1)
            // The same key for another request: refused, as the gateway refuses it.
            let other = try await progress.post(log, json: ["quantity": 2.5], headers: [(Self.keyHeader, "log-1")])
            #expect(other.status == 409, "\(other.text)")
            #expect(other.json["type"] as? String == ProblemType.idempotencyKeyReused.uri)

            // A tick without a check-in id, keyed: declared idempotent now, and honoured.
            let tick = "/v1/attempts/\(attemptID)/tasks/workouts"
            let ticked = try await progress.put(tick, json: ["done": true], headers: [(Self.keyHeader, "tick-1")])
            #expect(ticked.status == 200, "\(ticked.text)")
            let tickedAgain = try await progress.put(tick, json: ["done": true], headers: [(Self.keyHeader, "tick-1")])
            #expect(tickedAgain.header("Idempotent-Replayed") == "true")
            #expect(tickedAgain.body == ticked.body)
            let viaGateway = try await sarah.http.put(tick, json: ["done": false], headers: [("Idempotency-Key", "tick-2")])
            #expect(viaGateway.status == 200, "\(viaGateway.text)")
            let viaGatewayAgain = try await sarah.http.put(tick, json: ["done": false], headers: [("Idempotency-Key", "tick-2")])
            #expect(viaGatewayAgain.header("Idempotent-Replayed") == "true")
            #expect(try await stage.stack.database.count("SELECT count(*) FROM progress.checkins WHERE attempt_id = \(attempt) AND task_id = 'workouts'") == 2)

            // Challenges and identity record their answers the same way.
            let challenges = try stage.stack.signedHTTP("challenges", caller: sarah.id.key)
            let habit: [String: any Sendable] = [
                "kind": "habit", "name": "Stretch", "description": "Ten minutes",
                "tasks": [["taskID": "stretch", "title": "Stretch", "kind": "checkbox"] as [String: any Sendable]],
                "habit": ["colour": "#FF8800", "priority": 2] as [String: any Sendable],
            ]
            // One serialisation: a dictionary's keys may come out in another order, which would be another request.
            let habitBody = try JSONSerialization.data(withJSONObject: habit)
            let created = try await challenges.send(.POST, "/v1/challenges", body: habitBody, headers: [(Self.keyHeader, "habit-1")])
            #expect(created.status == 201, "\(created.text)")
            let createdAgain = try await challenges.send(.POST, "/v1/challenges", body: habitBody, headers: [(Self.keyHeader, "habit-1")])
            #expect(createdAgain.header("Idempotent-Replayed") == "true")
            #expect(createdAgain.body == created.body)
            #expect(try await stage.stack.database.count("SELECT count(*) FROM challenges.challenges WHERE owner_id = \(sarah.id)") == 1)

            let identity = try stage.stack.signedHTTP("identity", caller: sarah.id.key)
            let group: [String: any Sendable] = ["name": "Flat 3", "kind": "household", "timeZone": "Europe/London"]
            let groupBody = try JSONSerialization.data(withJSONObject: group)
            let formed = try await identity.send(.POST, "/v1/groups", body: groupBody, headers: [(Self.keyHeader, "group-1")])
            #expect(formed.status == 201, "\(formed.text)")
            let formedAgain = try await identity.send(.POST, "/v1/groups", body: groupBody, headers: [(Self.keyHeader, "group-1")])
            #expect(formedAgain.header("Idempotent-Replayed") == "true")
            #expect(formedAgain.body == formed.body)
            #expect(try await stage.stack.database.count("SELECT count(*) FROM identity.groups WHERE owner_id = \(sarah.id)") == 1)
        }
    }

    @Test("two connections sending the same check-in at once: one row, the first answer (or 409 while in flight), never a 500")
    func concurrentDuplicates() async throws {
        try await ProgressStage.with("keyed-race") { stage in
            let (sarah, attemptID) = try await Self.sarah(stage)
            var statuses: [Int] = []
            for race in 0..<10 {
                let checkInID = UUID().uuidString.lowercased()
                let tick = "/v1/attempts/\(attemptID)/tasks/workouts"
                let body: [String: any Sendable] = ["done": race % 2 == 0, "checkInID": checkInID]
                async let a = sarah.http.put(tick, json: body)
                async let b = sarah.http.put(tick, json: body)
                statuses += [try await a.status, try await b.status]
                let logID = UUID().uuidString.lowercased()
                let log = "/v1/attempts/\(attemptID)/tasks/water/logs"
                async let c = sarah.http.post(log, json: ["quantity": 0.25, "checkInID": logID])
                async let d = sarah.http.post(log, json: ["quantity": 0.25, "checkInID": logID])
                let (first, second) = (try await c, try await d)
                statuses += [first.status, second.status]
                for answer in [first, second] where answer.status == 201 {
                    #expect(answer.json["logID"] as? String == logID)
                }
                let rows = try await stage.stack.database.count(
                    "SELECT count(*) FROM progress.checkins WHERE checkin_id IN (\(UUID(uuidString: checkInID)!), \(UUID(uuidString: logID)!))")
                #expect(rows <= 2 && rows >= 1, "race \(race): \(rows) rows")
                #expect(try await stage.stack.database.count("SELECT count(*) FROM progress.checkins WHERE checkin_id = \(UUID(uuidString: logID)!)") == 1)
            }
            #expect(statuses.allSatisfy { (200..<300).contains($0) || $0 == 409 }, "\(statuses)")
            #expect(!statuses.contains(500), "\(statuses)")
        }
    }
}
