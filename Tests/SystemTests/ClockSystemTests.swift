import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("The development clock", .tags(.system), .kind(.system), .serialized)
struct ClockSystemTests {
    @Test("the simulated clock only moves forward (only the test harness rewinds it), and the gateway's public port has none")
    func forwardOnlyAndNotPublic() async throws {
        try await withTestStack("clock") { stack in
            try await stack.start("identity", environment: ["SIMULATED_CLOCK": "true"])
            try await stack.start("gateway", environment: ["SIMULATED_CLOCK": "true"])
            let gateway = try stack.http()
            #expect(try await gateway.get("/internal/clock").status == 404)
            let moved = try await gateway.put("/internal/clock", json: ["now": "2030-01-01T00:00:00Z"])
            #expect(moved.status == 404, "\(moved.text)")

            let identity = try stack.http("identity")
            func identityNow() async throws -> Date {
                let text = try #require(try await identity.get("/internal/clock").json["now"] as? String)
                return try #require(Timestamp.parse(text))
            }
            let start = try await identityNow()
            let later = start.addingTimeInterval(3600)
            #expect(try await identity.put("/internal/clock", json: ["now": Timestamp.format(later)]).status == 200)
            let back = try await identity.put("/internal/clock", json: ["now": Timestamp.format(start)])
            #expect(back.status == 409)
            #expect(back.json["type"] as? String == "https://surge.example/problems/clock-backwards")
            let detail = back.json["detail"] as? String ?? ""
            #expect(detail.contains(Timestamp.format(start)) && detail.contains("only moves forward"), "\(detail)")
            #expect(try await identityNow() >= later)

            // The harness's explicit rewind, which every test's first move relies on.
            #expect(try await identity.put("/internal/clock", json: ["now": Timestamp.format(start), "rewind": true]).status == 200)
            #expect(try await identityNow() < later)
            let past = Date(timeIntervalSince1970: 1_772_323_200)
            try await stack.setClock(past)
            #expect(abs(try await identityNow().timeIntervalSince(past)) < 60)
        }
    }
}
