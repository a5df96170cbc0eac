import AnalyticsDomain
import Foundation
import Hummingbird
import SurgeCalendar
import SurgeContracts
import SurgeRuntime

/// The KPI routes over `KPIQueries`.
struct KPIController {
    let queries: any KPIQueries
    let now: @Sendable () -> Date

    struct Value: ResponseCodable, Equatable {
        /// numerator / denominator; absent when the denominator is 0.
        var value: Double?
        var numerator: Int
        var denominator: Int

        init(_ value: KPIValue) {
            self.value = value.value
            numerator = value.numerator
            denominator = value.denominator
        }
    }

    struct Values: ResponseCodable, Equatable {
        var day7Retention: Value
        var challengeStartRate: Value
        var dailyCheckInRate: Value
        var completionRate: Value
        var averageStreakBeforeBreak: Value
        var restartRate: Value

        init(_ values: KPIValues) {
            day7Retention = Value(values.day7Retention)
            challengeStartRate = Value(values.challengeStartRate)
            dailyCheckInRate = Value(values.dailyCheckInRate)
            completionRate = Value(values.completionRate)
            averageStreakBeforeBreak = Value(values.averageStreakBeforeBreak)
            restartRate = Value(values.restartRate)
        }
    }

    struct Description: ResponseCodable, Equatable {
        var id: KPI
        var title: String
        var target: Double
        var direction: KPI.Direction
        var unit: KPI.Unit
    }

    struct Day: ResponseCodable, Equatable {
        var date: LocalDate
        /// Users who registered that day (cohort KPIs are theirs).
        var registrations: Int
        var values: Values
    }

    struct CohortWeek: ResponseCodable, Equatable {
        /// The Monday of the week the users registered in.
        var week: LocalDate
        var users: Int
        var values: Values
    }

    struct ReportResponse: ResponseCodable, Equatable {
        var from: LocalDate
        var to: LocalDate
        var generatedAt: Date
        var kpis: [Description]
        var days: [Day]
        var cohortWeeks: [CohortWeek]
        var totals: Values

        init(_ report: KPIReport, generatedAt: Date) {
            from = report.range.lowerBound
            to = report.range.upperBound
            self.generatedAt = generatedAt
            kpis = KPI.allCases.map { Description(id: $0, title: $0.title, target: $0.target, direction: $0.direction, unit: $0.unit) }
            days = report.days.map { Day(date: $0.date, registrations: $0.registrations, values: Values($0.values)) }
            cohortWeeks = report.cohortWeeks.map { CohortWeek(week: $0.week, users: $0.users, values: Values($0.values)) }
            totals = Values(report.totals)
        }
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(AnalyticsAPI.kpis) { request, context in
            try context.requireAdmin()
            let time = now()
            return ReportResponse(try await report(request, at: time), generatedAt: time)
        }
        router.add(AnalyticsAPI.kpisCSV) { request, context in
            try context.requireAdmin()
            let report = try await report(request, at: now())
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/csv; charset=utf-8",
                    .contentDisposition: "attachment; filename=\"surge-kpis-\(report.range.lowerBound)-\(report.range.upperBound).csv\"",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(string: report.csv)))
        }
    }

    private func report(_ request: Request, at time: Date) async throws -> KPIReport {
        var errors: [FieldError] = []
        func date(_ name: String) -> LocalDate? {
            guard let text = request.uri.queryParameters[Substring(name)].map(String.init) else { return nil }
            guard let date = LocalDate(text) else {
                errors.append(FieldError(field: name, message: "must be a date such as 2026-11-24"))
                return nil
            }
            return date
        }
        let from = date("from")
        let to = date("to")
        guard errors.isEmpty else { throw Problem.validation(errors) }
        do {
            return try await queries.report(for: try KPIRange.resolve(from: from, to: to, today: LocalCalendar.utc.date(at: time)), now: time)
        } catch let error as KPIRangeError {
            throw AnalyticsProblems.problem(for: error)
        }
    }
}

/// Domain errors as problem documents: the one place analytics maps them.
enum AnalyticsProblems {
    static func problem(for error: KPIRangeError) -> Problem {
        switch error {
        case .fromAfterTo: Problem.validation(field: "from", "must not be after `to`")
        case .tooLong(let days): Problem.validation(field: "from", "the range may span at most \(days) days")
        case .unsupported: Problem.validation(field: "from", "dates must lie between \(LocalDate.supportedRange.lowerBound) and \(LocalDate.supportedRange.upperBound)")
        }
    }
}
