import AnalyticsDomain
import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import AnalyticsService

@Suite("Analytics: KPI arithmetic", .tags(.unit), .kind(.unit))
struct KPIArithmeticTests {
    let day = LocalDate("2026-11-16")!

    @Test("a value is a count out of a count, absent when there is nothing to measure")
    func values() {
        #expect(KPIValue(numerator: 3, denominator: 4).value == 0.75)
        #expect(KPIValue().value == nil)
        #expect((KPIValue(numerator: 1, denominator: 2) + KPIValue(numerator: 2, denominator: 2)) == KPIValue(numerator: 3, denominator: 4))
    }

    @Test("targets follow 000, restart rate is better when lower")
    func targets() {
        #expect(KPI.day7Retention.isMet(by: 0.4) && !KPI.day7Retention.isMet(by: 0.39))
        #expect(KPI.restartRate.isMet(by: 0.5) && !KPI.restartRate.isMet(by: 0.51))
        #expect(KPI.averageStreakBeforeBreak.unit == .days && KPI.averageStreakBeforeBreak.target == 7)
        #expect(KPI.allCases.filter { $0.direction == .atMost } == [.restartRate])
    }

    @Test("a report has every day of its range, totals summing counts rather than averaging ratios")
    func report() {
        var first = KPIValues()
        first.dailyCheckInRate = KPIValue(numerator: 1, denominator: 1)
        var third = KPIValues()
        third.dailyCheckInRate = KPIValue(numerator: 1, denominator: 3)
        third.averageStreakBeforeBreak = KPIValue(numerator: 12, denominator: 2)
        let report = KPIReport(
            range: day...day.adding(days: 2), days: [DayKPIs(date: day.adding(days: 2), values: third), DayKPIs(date: day, registrations: 5, values: first)],
            cohortWeeks: [])
        #expect(report.days.map(\.date) == [day, day.adding(days: 1), day.adding(days: 2)])
        #expect(report.days[1] == DayKPIs(date: day.adding(days: 1)))
        #expect(report.totals.dailyCheckInRate == KPIValue(numerator: 2, denominator: 4))
        #expect(report.totals.dailyCheckInRate.value == 0.5)
        #expect(report.totals.averageStreakBeforeBreak.value == 6)
    }

    @Test("CSV: one row per period and KPI, empty value where nothing was measured")
    func csv() {
        var values = KPIValues()
        values.day7Retention = KPIValue(numerator: 1, denominator: 3)
        let report = KPIReport(
            range: day...day, days: [DayKPIs(date: day, registrations: 3, values: values)], cohortWeeks: [CohortWeekKPIs(week: day, users: 3, values: values)])
        let lines = report.csv.split(separator: "\n").map(String.init)
        #expect(lines.first == "scope,period,kpi,value,numerator,denominator,target")
        #expect(lines.count == 1 + 3 * KPI.allCases.count)
        #expect(lines.contains("day,2026-11-16,day7Retention,0.333333,1,3,0.4"))
        #expect(lines.contains("day,2026-11-16,restartRate,,0,0,0.5"))
        #expect(lines.contains("cohortWeek,2026-11-16,averageStreakBeforeBreak,,0,0,7"))
        #expect(lines.contains("total,2026-11-16..2026-11-16,day7Retention,0.333333,1,3,0.4"))
    }

    @Test("ranges: four weeks by default, at most a year, never backwards")
    func ranges() throws {
        let today = LocalDate("2026-11-24")!
        #expect(try KPIRange.resolve(from: nil, to: nil, today: today) == LocalDate("2026-10-28")!...today)
        #expect(try KPIRange.resolve(from: nil, to: day, today: today) == day.adding(days: -27)...day)
        #expect(try KPIRange.resolve(from: day, to: day, today: today) == day...day)
        #expect(try KPIRange.resolve(from: today.adding(days: -365), to: today, today: today).lowerBound == today.adding(days: -365))
        #expect(throws: KPIRangeError.tooLong(maxDays: 366)) { try KPIRange.resolve(from: today.adding(days: -366), to: today, today: today) }
        #expect(throws: KPIRangeError.fromAfterTo) { try KPIRange.resolve(from: today, to: day, today: today) }
        #expect(throws: KPIRangeError.unsupported) { try KPIRange.resolve(from: LocalDate("1969-12-31")!, to: day, today: today) }
    }

    @Test("telemetry: only a change of value opens or closes an opt-out")
    func telemetry() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(TelemetryTransition.of(optOut: true, at: now, currentlyOptedOut: false) == .optedOut(at: now))
        #expect(TelemetryTransition.of(optOut: true, at: now, currentlyOptedOut: true) == .unchanged)
        #expect(TelemetryTransition.of(optOut: false, at: now, currentlyOptedOut: true) == .optedIn(at: now))
        #expect(TelemetryTransition.of(optOut: false, at: now, currentlyOptedOut: false) == .unchanged)
    }

    @Test("definitions: which days expect work, what is a break, what the user did")
    func definitions() {
        #expect([PeriodOutcome.completed, .missed, .frozen, .kept].allSatisfy(Definitions.expectsWork))
        #expect(![PeriodOutcome.rest, .paused].contains(where: Definitions.expectsWork))
        #expect(Definitions.isBreak(.broken, previous: 3))
        #expect(!Definitions.isBreak(.broken, previous: 0))
        #expect(!Definitions.isBreak(.extended, previous: 3))
        #expect(Definitions.isUserAction(.abandoned) && !Definitions.isUserAction(.failed) && !Definitions.isUserAction(.completed))
    }
}

@Suite("Analytics: routes", .tags(.unit), .kind(.unit))
struct KPIRouterTests {
    let signer: InternalCallSigner
    let now = Timestamp.parse("2026-11-24T10:00:00Z")!

    init() throws {
        signer = try RouterTesting.signer()
    }

    func app(_ queries: FixedKPIQueries) -> some ApplicationProtocol {
        let router = RouterTesting.router(signer: signer)
        let now = self.now
        AnalyticsService.addRoutes(to: router, queries: queries, now: { now })
        return Application(router: router)
    }

    static func sample(_ range: ClosedRange<LocalDate>) -> KPIReport {
        var values = KPIValues()
        values.day7Retention = KPIValue(numerator: 2, denominator: 5)
        return KPIReport(
            range: range, days: [DayKPIs(date: range.lowerBound, registrations: 5, values: values)],
            cohortWeeks: [CohortWeekKPIs(week: range.lowerBound.startOfWeek, users: 5, values: values)])
    }

    /// A call as the gateway forwards it, from an admin unless `roles` says otherwise.
    func signed(_ target: String, roles: [String] = ["admin"]) -> HTTPFields {
        let caller = UUID().key
        let rolesHeader = InternalCallSigner.rolesHeader(roles)
        var headers: HTTPFields = [InternalHeaders.requestID: "r", InternalHeaders.caller: caller]
        if let rolesHeader { headers[InternalHeaders.roles] = rolesHeader }
        headers[InternalCallSigner.header] = signer.signature(method: "GET", target: target, caller: caller, roles: rolesHeader, requestID: "r")
        return headers
    }

    @Test("a caller who is not an admin gets the 404 of a route that does not exist, even past the gateway; an unsigned call gets 401")
    func adminsOnly() async throws {
        let queries = FixedKPIQueries(Self.sample)
        try await app(queries).test(.router) { client in
            for target in ["/v1/admin/kpis", "/v1/admin/kpis.csv"] {
                try await client.execute(uri: target, method: .get, headers: signed(target, roles: [])) { response in
                    #expect(response.status == .notFound)
                    #expect(String(buffer: response.body).contains("not-found"))
                }
                try await client.execute(uri: target, method: .get, headers: [InternalHeaders.caller: UUID().key, InternalHeaders.roles: "admin"]) {
                    response in
                    #expect(response.status == .unauthorized)
                }
            }
        }
        #expect(queries.asked.isEmpty)
    }

    @Test("the JSON report: KPIs with targets, every day, cohort weeks, totals; four weeks by default")
    func json() async throws {
        let queries = FixedKPIQueries(Self.sample)
        try await app(queries).test(.router) { client in
            try await client.execute(uri: "/v1/admin/kpis", method: .get, headers: signed("/v1/admin/kpis")) { response in
                #expect(response.status == .ok)
                let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
                #expect(json["from"] as? String == "2026-10-28")
                #expect(json["to"] as? String == "2026-11-24")
                let kpis = try #require(json["kpis"] as? [[String: Any]])
                #expect(kpis.compactMap { $0["id"] as? String } == KPI.allCases.map(\.rawValue))
                #expect(kpis.first?["target"] as? Double == 0.4)
                #expect((json["days"] as? [Any])?.count == 28)
                let first = try #require((json["days"] as? [[String: Any]])?.first)
                #expect(first["registrations"] as? Int == 5)
                let retention = try #require((first["values"] as? [String: Any])?["day7Retention"] as? [String: Any])
                #expect(retention["value"] as? Double == 0.4)
                #expect(retention["numerator"] as? Int == 2)
                #expect((json["cohortWeeks"] as? [[String: Any]])?.first?["week"] as? String == "2026-10-26")
                #expect(((json["totals"] as? [String: Any])?["restartRate"] as? [String: Any])?["value"] == nil)
            }
            let target = "/v1/admin/kpis?from=2026-11-01&to=2026-11-07"
            try await client.execute(uri: target, method: .get, headers: signed(target)) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(queries.asked.last == LocalDate("2026-11-01")!...LocalDate("2026-11-07")!)
    }

    @Test("CSV with a file name, the same figures")
    func csv() async throws {
        let target = "/v1/admin/kpis.csv?from=2026-11-01&to=2026-11-02"
        try await app(FixedKPIQueries(Self.sample)).test(.router) { client in
            try await client.execute(uri: target, method: .get, headers: signed(target)) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(response.headers[.contentDisposition]?.contains("surge-kpis-2026-11-01-2026-11-02.csv") == true)
                let text = String(buffer: response.body)
                #expect(text.hasPrefix("scope,period,kpi,value,numerator,denominator,target\n"))
                #expect(text.contains("day,2026-11-01,day7Retention,0.4,2,5,0.4"))
            }
        }
    }

    @Test("bad ranges are problem documents naming the field")
    func badRanges() async throws {
        try await app(FixedKPIQueries(Self.sample)).test(.router) { client in
            for (target, field) in [
                ("/v1/admin/kpis?from=yesterday", "from"), ("/v1/admin/kpis?to=2026-13-01", "to"),
                ("/v1/admin/kpis?from=2026-11-10&to=2026-11-01", "from"), ("/v1/admin/kpis?from=2024-01-01&to=2026-11-01", "from"),
            ] {
                try await client.execute(uri: target, method: .get, headers: signed(target)) { response in
                    #expect(response.status == .unprocessableContent, "\(target)")
                    #expect(response.headers[.contentType] == "application/problem+json")
                    #expect(String(buffer: response.body).contains("\"\(field)\""), "\(target)")
                }
            }
        }
    }
}
