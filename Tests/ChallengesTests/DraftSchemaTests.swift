import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ChallengesService

/// The create-challenge request's schema in the OpenAPI document refuses what the server refuses across fields (a
/// quantity task's target by the challenge's kind, a badge rule's threshold and window, the badge rules a kind allows,
/// an instant with a leap second), so generated clients and fuzzers agree with the server.
@Suite("Challenges: the draft's schema agrees with its validation", .tags(.integration), .kind(.integration))
struct DraftSchemaTests {
    static let weeklyTask = #"{"taskID":"squats","title":"Squats","kind":"quantity","unit":"squats","cadence":{"kind":"weekly"}"#
    static let competition =
        #"{"kind":"competition","name":"Most water","visibility":"private","competition":{"startsAt":"2026-05-31T22:00:00Z","endsAt":"2026-06-07T22:00:00Z","timeZone":"Europe/Rome","unit":"litres"}"#
    static let waterTask = #"{"taskID":"water","title":"Water","kind":"quantity","unit":"litres""#

    static func weekly(task: String = weeklyTask + #","targetFromDailyGoal":7}"#, badges: String? = nil) -> String {
        #"{"kind":"weekly","name":"Squats this week","tasks":[\#(task)]\#(badges.map { #","badges":[\#($0)]"# } ?? "")}"#
    }

    static func habit(task: String) -> String { #"{"kind":"habit","name":"Reading","tasks":[\#(task)]}"# }

    static func badge(_ rule: String) -> String { #"{"id":"steady","title":"Steady","rule":\#(rule)}"# }

    /// Bodies the server takes, with what the cases below break in them.
    static let accepted = [
        weekly(), weekly(task: weeklyTask + #","target":50}"#), weekly(badges: badge(#"{"kind":"streak","threshold":3}"#)),
        weekly(badges: badge(#"{"kind":"challengeCompleted"}"#)),
        habit(task: #"{"taskID":"pages","title":"Pages","kind":"quantity","unit":"pages","target":20}"#),
        competition + "}", competition + #","tasks":[\#(waterTask)}]}"#, competition + #","tasks":[\#(waterTask),"target":2}]}"#,
        competition + #","badges":[\#(badge(#"{"kind":"firstPlace","window":"month"}"#))]}"#,
    ]

    /// A body the server refuses, and the fields its 422 names.
    static let refused: [(String, [String])] = [
        (weekly(task: weeklyTask + "}"), ["tasks[0].target"]),
        (weekly(task: weeklyTask + #","target":50,"targetFromDailyGoal":7}"#), ["tasks[0].target"]),
        (habit(task: #"{"taskID":"pages","title":"Pages","kind":"quantity","unit":"pages"}"#), ["tasks[0].target"]),
        (habit(task: #"{"taskID":"pages","title":"Pages","kind":"quantity","unit":"pages","targetFromDailyGoal":1}"#), ["tasks[0].targetFromDailyGoal"]),
        (competition + #","tasks":[\#(waterTask),"targetFromDailyGoal":2}]}"#, ["tasks[0].targetFromDailyGoal"]),
        (weekly(badges: badge(#"{"kind":"challengeCompleted","threshold":3}"#)), ["badges[0].rule.threshold"]),
        (weekly(badges: badge(#"{"kind":"streak"}"#)), ["badges[0].rule.threshold"]),
        (weekly(badges: badge(#"{"kind":"streak","threshold":3,"window":"week"}"#)), ["badges[0].rule.window"]),
        (weekly(badges: badge(#"{"kind":"firstPlace"}"#)), ["badges[0].rule.kind"]),
        (competition + #","badges":[\#(badge(#"{"kind":"firstPlace","threshold":1}"#))]}"#, ["badges[0].rule.threshold"]),
        (competition.replacingOccurrences(of: "2026-05-31T22:00:00Z", with: "2026-05-31T21:59:60Z") + "}", ["competition.startsAt"]),
    ]

    @Test("each body the server refuses with 422 the createChallenge schema refuses; each it takes, the schema takes")
    func schemaRefusesWhatTheServerRefuses() async throws {
        let validator = try JSONSchemaValidator(document: try OpenAPIGenerator.document(ChallengesService.api))
        let schema = try #require(validator.schema(at: "#/paths/~1v1~1challenges/post/requestBody/content/application~1json/schema"))
        @Sendable func check(_ body: String) throws -> [String] {
            validator.violations(of: try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)), against: schema)
        }
        try await RouterTests.withRoutes { h, gateway in
            let me = try await h.user()
            for body in Self.accepted {
                let created = try await gateway.send(.post, "/v1/challenges", as: me, body: body)
                #expect(created.status == .created, "\(body): \(String(decoding: created.body, as: UTF8.self))")
                let violations = try check(body)
                #expect(violations.isEmpty, "\(body): \(violations)")
            }
            for (body, fields) in Self.refused {
                let answer = try await gateway.send(.post, "/v1/challenges", as: me, body: body)
                #expect(answer.status == .unprocessableContent && answer.problem?.fields == fields, "\(body): \(String(decoding: answer.body, as: UTF8.self))")
                let violations = try check(body)
                #expect(!violations.isEmpty, "the schema takes \(body)")
            }
        }
    }
}
