import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import TemplateDomain
import SurgeTestSupport
import Testing

@testable import TemplateService

@Suite("Template: domain rules", .tags(.unit), .kind(.unit))
struct TallyDomainTests {
    let user = UUID()

    @Test("a tally reaches a milestone at each multiple, never at zero or with no interval")
    func milestones() {
        let date = LocalDate("2026-11-24")!
        let reached = (0...25).filter { DailyTally(userID: user, date: date, checkIns: $0).isMilestone(every: 10) }
        #expect(reached == [10, 20])
        #expect(!DailyTally(userID: user, date: date, checkIns: 10).isMilestone(every: 0))
    }

    @Test("only today and the past year can be read")
    func readableDays() throws {
        let today = LocalDate("2026-11-24")!
        try TallyRules.checkReadable(today, today: today)
        try TallyRules.checkReadable(today.adding(days: -TallyRules.historyDays), today: today)
        #expect(throws: TallyError.dateOutOfRange(today.adding(days: 1))) { try TallyRules.checkReadable(today.adding(days: 1), today: today) }
        let tooOld = today.adding(days: -TallyRules.historyDays - 1)
        #expect(throws: TallyError.dateOutOfRange(tooOld)) { try TallyRules.checkReadable(tooOld, today: today) }
    }
}

@Suite("Template: routes", .tags(.unit), .kind(.unit))
struct TallyRouterTests {
    let signer: InternalCallSigner
    let user = UUID()
    let now = Timestamp.parse("2026-11-24T10:00:00Z")!

    init() throws {
        signer = try RouterTesting.signer()
    }

    /// The template's router over an in-memory store: no database, no broker.
    func app(_ tallies: [DailyTally]) -> some ApplicationProtocol {
        let router = RouterTesting.router(signer: signer)
        let now = self.now
        TemplateService.addRoutes(to: router, tallies: InMemoryTallyStore(tallies), now: { now })
        return Application(router: router)
    }

    func signed(_ path: String, caller: UUID?) -> HTTPFields {
        RouterTesting.signedHeaders(.get, path, caller: caller, signer: signer)
    }

    @Test("the caller reads their own tally of a day; other users' tallies never show")
    func readsOwnTally() async throws {
        let date = LocalDate("2026-11-23")!
        let app = app([DailyTally(userID: user, date: date, checkIns: 3), DailyTally(userID: UUID(), date: date, checkIns: 9)])
        try await app.test(.router) { client in
            let path = "/v1/tallies/2026-11-23?timeZone=Europe/Rome"
            try await client.execute(uri: path, method: .get, headers: signed(path, caller: user)) { response in
                #expect(response.status == .ok)
                let body = try SurgeJSON.decode(TallyController.TallyResponse.self, from: Data(buffer: response.body))
                #expect(body == .init(date: date, checkIns: 3))
            }
            let empty = "/v1/tallies/2026-11-24"
            try await client.execute(uri: empty, method: .get, headers: signed(empty, caller: user)) { response in
                let body = try SurgeJSON.decode(TallyController.TallyResponse.self, from: Data(buffer: response.body))
                #expect(body.checkIns == 0)
            }
            try await client.execute(uri: "/internal/export", method: .get, headers: signed("/internal/export", caller: user)) { response in
                let export = try SurgeJSON.decode(TallyController.ExportResponse.self, from: Data(buffer: response.body))
                #expect(export.tallies == [.init(date: date, checkIns: 3)])
            }
        }
    }

    @Test("bad input is a problem document naming the field; an unsigned or anonymous call gets nothing")
    func refusals() async throws {
        try await app([]).test(.router) { client in
            for (path, field) in [
                ("/v1/tallies/2026-11-25", "date"), ("/v1/tallies/yesterday", "date"), ("/v1/tallies/2024-01-01", "date"),
                ("/v1/tallies/2026-11-24?timeZone=Mars/Base", "timeZone"),
            ] {
                try await client.execute(uri: path, method: .get, headers: signed(path, caller: user)) { response in
                    #expect(response.status == .unprocessableContent || response.status == .badRequest, "\(path)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(String(buffer: response.body).contains("\"\(field)\""), "\(path): \(String(buffer: response.body))")
                }
            }
            let path = "/v1/tallies/2026-11-24"
            try await client.execute(uri: path, method: .get, headers: signed(path, caller: nil)) { response in
                #expect(response.status == .unauthorized)
            }
            try await client.execute(uri: path, method: .get, headers: [InternalHeaders.caller: user.key]) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }
}
