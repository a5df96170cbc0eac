import Foundation
import Hummingbird
import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// Time off: pausing and resuming one attempt, a skip day, and a vacation over everything at once.
struct PausesController {
    let pauses: PauseHandler

    struct PauseRequestBody: Codable, Sendable {
        /// The first local day off: today when absent; yesterday (or earlier) only while its check-in window is open.
        var from: LocalDate?
        /// How many days, 1 to 366; until resumed when absent (at most the rules' `maxDaysPerPause`).
        var days: Int?
    }

    /// An attempt a vacation could not pause, with the problem that refused it.
    struct NotPausedView: Codable, Sendable {
        var attemptID: UUID
        var challengeName: String
        /// The problem type URI, as a problem document's `type`.
        var type: String
        var detail: String
    }

    struct VacationResponse: ResponseCodable {
        var paused: [AttemptView]
        var notPaused: [NotPausedView]
    }

    struct ResumedResponse: ResponseCodable {
        var resumed: [AttemptView]
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ProgressAPI.pauseAttempt) { request, context in
            let body = try await Self.decode(request, context: context)
            let snapshot = try await pauses.pause(
                try request.uuidParameter("attemptID", context: context), userID: try context.caller(),
                command: PauseCommand(kind: .pause, from: body.from, days: body.days), trace: context.trace)
            return AttemptResponse(attempt: AttemptView(snapshot))
        }
        router.add(ProgressAPI.resumeAttempt) { request, context in
            AttemptResponse(attempt: AttemptView(
                try await pauses.resume(try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)))
        }
        router.add(ProgressAPI.skipDay) { request, context in
            let snapshot = try await pauses.pause(
                try request.uuidParameter("attemptID", context: context), userID: try context.caller(),
                command: PauseCommand(kind: .skipDay, from: nil, days: 1), trace: context.trace)
            return AttemptResponse(attempt: AttemptView(snapshot))
        }
        router.add(ProgressAPI.startVacation) { request, context in
            let body = try await Self.decode(request, context: context)
            let result = try await pauses.vacation(
                userID: try context.caller(), command: PauseCommand(kind: .vacation, from: body.from, days: body.days), trace: context.trace)
            return VacationResponse(
                paused: result.paused.map(AttemptView.init),
                notPaused: result.refused.map {
                    NotPausedView(attemptID: $0.attempt.id, challengeName: $0.challengeName, type: $0.refusal.problem.type, detail: $0.refusal.problem.detail ?? "")
                })
        }
        router.add(ProgressAPI.endVacation) { _, context in
            ResumedResponse(resumed: try await pauses.endVacation(userID: try context.caller(), trace: context.trace).map(AttemptView.init))
        }
    }

    static func decode(_ request: Request, context: SurgeRequestContext) async throws -> PauseRequestBody {
        let body = try await request.decode(as: PauseRequestBody.self, context: context)
        if let days = body.days, !(1...PauseRequest.maximumDays).contains(days) {
            throw Problem.validation(field: "days", "must be an integer from 1 to \(PauseRequest.maximumDays)")
        }
        return body
    }
}
