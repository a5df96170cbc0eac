import Foundation
import Hummingbird
import SurgeCalendar
import SurgeContracts
import SurgeRuntime
import TemplateDomain

/// Routes over the store protocol: what the template answers, and where domain errors become problem documents.
struct TallyController {
    let tallies: any TallyStore
    let now: @Sendable () -> Date

    struct TallyResponse: ResponseCodable, Equatable {
        var date: LocalDate
        var checkIns: Int
    }

    /// The template's part of the caller's data export (`GET /internal/export`, merged by the gateway).
    struct ExportResponse: ResponseCodable, Equatable {
        var tallies: [TallyResponse]
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(TemplateAPI.dailyTally) { request, context in
            let caller = try context.caller()
            guard let text = context.parameters.get("date"), let date = LocalDate(text) else {
                throw Problem.validation(field: "date", "must be a date such as 2026-11-24")
            }
            let zone = request.uri.queryParameters["timeZone"].map(String.init) ?? "UTC"
            guard let calendar = LocalCalendar(zoneNamed: zone) else { throw Problem.validation(field: "timeZone", "must be an IANA time zone") }
            do {
                try TallyRules.checkReadable(date, today: calendar.date(at: now()))
            } catch let error as TallyError {
                throw TemplateProblems.problem(for: error)
            }
            let tally = try await tallies.tally(of: caller, on: date)
            return TallyResponse(date: tally.date, checkIns: tally.checkIns)
        }
        router.get("/internal/export") { _, context in
            ExportResponse(tallies: try await tallies.export(userID: try context.caller()).map { TallyResponse(date: $0.date, checkIns: $0.checkIns) })
        }
    }
}

/// Domain errors as problem documents: the one place the template maps them.
enum TemplateProblems {
    static func problem(for error: TallyError) -> Problem {
        switch error {
        case .dateOutOfRange(let date):
            Problem.validation(field: "date", "\(date) is in the future or more than \(TallyRules.historyDays) days ago")
        }
    }
}
