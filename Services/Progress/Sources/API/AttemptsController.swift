import Foundation
import Hummingbird
import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// Attempts: starting, restarting and abandoning them, and what the caller reads about them and their points.
struct AttemptsController {
    let lifecycle: AttemptLifecycle
    let queries: AttemptQueries
    let points: PointsQueries

    struct StartRequest: Codable, Sendable {
        var challengeID: UUID
    }

    struct CalendarResponse: ResponseCodable {
        var month: String
        var days: [CalendarDay]
    }

    struct HistoryResponse: ResponseCodable {
        var from: LocalDate
        var to: LocalDate
        var days: [HistoryDay]
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ProgressAPI.startAttempt) { request, context in
            let body = try await request.decode(as: StartRequest.self, context: context)
            let snapshot = try await lifecycle.start(body.challengeID, userID: try context.caller(), trace: context.trace)
            return EditedResponse(status: .created, response: AttemptResponse(attempt: AttemptView(snapshot)))
        }
        router.add(ProgressAPI.listAttempts) { request, context in
            let query = request.uri.queryParameters
            var status: AttemptStatus?
            if let text = query["status"].map(String.init) {
                guard let value = AttemptStatus(rawValue: text) else {
                    throw Problem.validation(field: "status", "must be active, failed, completed or abandoned")
                }
                status = value
            }
            var challengeID: UUID?
            if let text = query["challengeID"].map(String.init) {
                guard let id = UUID(uuidString: text) else { throw Problem.validation(field: "challengeID", "must be a UUID") }
                challengeID = id
            }
            return try await queries.list(userID: try context.caller(), status: status, challengeID: challengeID, page: try PageRequest(request))
        }
        router.add(ProgressAPI.getAttempt) { request, context in
            AttemptResponse(attempt: AttemptView(try await queries.snapshot(try request.uuidParameter("attemptID", context: context), userID: try context.caller())))
        }
        router.add(ProgressAPI.restartAttempt) { request, context in
            let snapshot = try await lifecycle.restart(try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)
            return EditedResponse(status: .created, response: AttemptResponse(attempt: AttemptView(snapshot)))
        }
        router.add(ProgressAPI.abandonAttempt) { request, context in
            AttemptResponse(attempt: AttemptView(
                try await lifecycle.abandon(try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)))
        }
        router.add(ProgressAPI.calendar) { request, context in
            var month: LocalDate?
            if let text = request.uri.queryParameters["month"].map(String.init) {
                guard let date = LocalDate(text + "-01") else { throw Problem.validation(field: "month", "must be YYYY-MM") }
                month = date
            }
            let calendar = try await queries.calendar(try request.uuidParameter("attemptID", context: context), userID: try context.caller(), month: month)
            return CalendarResponse(month: String(calendar.month.description.prefix(7)), days: calendar.days)
        }
        router.add(ProgressAPI.attemptHistory) { request, context in
            let history = try await queries.history(
                userID: try context.caller(), attemptID: try request.uuidParameter("attemptID", context: context), weeks: try Self.weeks(request))
            return HistoryResponse(from: history.from, to: history.to, days: history.days)
        }
        router.add(ProgressAPI.myHistory) { request, context in
            let history = try await queries.history(userID: try context.caller(), attemptID: nil, weeks: try Self.weeks(request))
            return HistoryResponse(from: history.from, to: history.to, days: history.days)
        }
        router.add(ProgressAPI.myPoints) { _, context in
            try await points.points(userID: try context.caller())
        }
        router.add(ProgressAPI.myLedger) { request, context in
            try await points.ledger(userID: try context.caller(), page: try PageRequest(request))
        }
        router.get("/internal/export") { _, context in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try await queries.export(userID: try context.caller()))))
        }
    }

    static func weeks(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters["weeks"].map(String.init) else { return 12 }
        guard let weeks = Int(text), (1...53).contains(weeks) else { throw Problem.validation(field: "weeks", "must be an integer from 1 to 53") }
        return weeks
    }
}
