import ProgressDomain
import SurgeContracts
import SurgeRuntime

/// The public operations progress answers.
enum ProgressAPI {
    typealias Attempts = AttemptsController
    typealias CheckIns = CheckInsController
    typealias Pauses = PausesController

    /// What a check-in (a tick, a logged amount, a photo, a removal) can be refused for.
    static let checkInProblems: [ProblemType] = [
        .attemptNotActive, .checkInWindowClosed, .checkInInFuture, .checkInBeforeStart, .checkInAfterEnd, .outsideCompetition, .dayOff,
    ]
    /// YYYY-MM, 1970-01 to 2200-12.
    static let monthPattern = "^(19[7-9][0-9]|2[01][0-9]{2}|2200)-(0[1-9]|1[0-2])$"

    static let startAttempt = APIOperation(
        .post, "/v1/attempts", id: "startAttempt", service: .progress,
        summary: "Start a challenge, habit, competition or weekly challenge (several may run at once).",
        request: Attempts.StartRequest.self, status: .created, response: AttemptResponse.self,
        problems: [.notFound, .alreadyStarted, .chore, .competitionEnded, .beyondSupportedDates])
    static let listAttempts = APIOperation(
        .get, "/v1/attempts", id: "listAttempts", service: .progress,
        summary: "The caller's attempts, newest first, with live stats; filter by status or challenge.",
        query: [
            .init("status", "Only attempts in this state.", schema: .of(AttemptStatus.self)),
            .init("challengeID", "Only attempts at this challenge (the attempt history).", schema: .string(format: "uuid")),
        ] + APIOperation.QueryParameter.pagination,
        response: Page<AttemptView>.self)
    static let getAttempt = APIOperation(
        .get, "/v1/attempts/{attemptID}", id: "getAttempt", service: .progress,
        summary: "Day N of M, streaks, progress, points, today's tasks and what remains, the week's goal.", response: AttemptResponse.self)
    static let restartAttempt = APIOperation(
        .post, "/v1/attempts/{attemptID}/restart", id: "restartAttempt", service: .progress,
        summary: "Start again at day 1 after a failure (or give up an active attempt and start again); history is kept.",
        status: .created, response: AttemptResponse.self, problems: [.attemptCompleted, .alreadyStarted, .competitionEnded, .beyondSupportedDates],
        idempotent: true)
    static let abandonAttempt = APIOperation(
        .post, "/v1/attempts/{attemptID}/abandon", id: "abandonAttempt", service: .progress,
        summary: "Give up an active attempt; it stays in the history.", response: AttemptResponse.self, problems: [.attemptNotActive])
    static let setTask = APIOperation(
        .put, "/v1/attempts/{attemptID}/tasks/{taskID}", id: "setTaskDone", service: .progress,
        summary: "Tick or untick a checkbox task for the local day it happened on (offline clients send happenedAt and a checkInID).",
        request: CheckIns.TaskRequest.self, response: AttemptResponse.self, problems: checkInProblems, idempotent: true)
    static let logQuantity = APIOperation(
        .post, "/v1/attempts/{attemptID}/tasks/{taskID}/logs", id: "logQuantity", service: .progress,
        summary: "Log an amount of a quantity task (summed per day); series points and the anti-cheat cap apply.",
        request: CheckIns.LogRequest.self, status: .created, response: CheckIns.LogResponse.self, problems: checkInProblems)
    static let removeLog = APIOperation(
        .delete, "/v1/attempts/{attemptID}/logs/{logID}", id: "removeLog", service: .progress,
        summary: "Take a logged amount back.", response: AttemptResponse.self, problems: checkInProblems + [.alreadyRemoved])
    static let attachPhoto = APIOperation(
        .put, "/v1/attempts/{attemptID}/tasks/{taskID}/photo", id: "attachPhoto", service: .progress,
        summary: "Upload the photo of a photo task (JPEG, PNG, HEIC or WebP, at most 10 MB); query `happenedAt` or `date` as for other check-ins.",
        query: [
            .init("happenedAt", "When the photo was taken (RFC 3339); defaults to now.", schema: .instant),
            .init("date", "The local day it belongs to, if not the day of happenedAt.", schema: .of(LocalDate.self)),
        ],
        requestMediaTypes: PhotoRules.contentTypes, response: CheckIns.PhotoResponse.self, problems: checkInProblems)
    /// What taking time off can be refused for.
    static let pauseProblems: [ProblemType] = [.attemptNotActive, .pauseNotAllowed, .pauseTooLate, .pauseOverlaps, .pauseTooLong, .pauseLimitReached]
    static let pauseAttempt = APIOperation(
        .post, "/v1/attempts/{attemptID}/pause", id: "pauseAttempt", service: .progress,
        summary: "Pause an attempt from a local day (today by default; yesterday while its check-in window is open) for a number of days or until resumed: days off are neither completed nor missed.",
        request: Pauses.PauseRequestBody.self, response: AttemptResponse.self, problems: pauseProblems, idempotent: true)
    static let resumeAttempt = APIOperation(
        .post, "/v1/attempts/{attemptID}/resume", id: "resumeAttempt", service: .progress,
        summary: "End the attempt's pause in progress (days count again from today), or cancel the next one.",
        response: AttemptResponse.self, problems: [.attemptNotActive, .notPaused])
    static let skipDay = APIOperation(
        .post, "/v1/attempts/{attemptID}/skip-day", id: "skipDay", service: .progress,
        summary: "Spend one of the month's skip days (rules.pause.skipDaysPerMonth) on today: it counts like a paused day.",
        response: AttemptResponse.self, problems: pauseProblems, idempotent: true)
    static let startVacation = APIOperation(
        .post, "/v1/me/vacation", id: "startVacation", service: .progress,
        summary: "Pause every active attempt at once from the same day; attempts whose rules refuse are listed with the problem.",
        request: Pauses.PauseRequestBody.self, response: Pauses.VacationResponse.self, idempotent: true)
    static let endVacation = APIOperation(
        .delete, "/v1/me/vacation", id: "endVacation", service: .progress,
        summary: "Resume every active attempt with a pause in progress or to come: days count again from today.",
        response: Pauses.ResumedResponse.self, problems: [.notPaused])
    static let calendar = APIOperation(
        .get, "/v1/attempts/{attemptID}/calendar", id: "attemptCalendar", service: .progress,
        summary: "A month of an attempt, day by day: completed, missed, frozen, rest, open or future.",
        query: [
            .init(
                "month", "The month, YYYY-MM from 1970-01 to 2200-12; the current one in the caller's time zone when omitted.",
                schema: JSONSchema.string().refined(.init(pattern: monthPattern, example: "2026-03")))
        ],
        response: Attempts.CalendarResponse.self)
    static let attemptHistory = APIOperation(
        .get, "/v1/attempts/{attemptID}/history", id: "attemptHistory", service: .progress,
        summary: "Contribution history of one attempt: tasks done per day over the last weeks (12 by default).",
        query: [.init("weeks", "How many weeks back.", schema: .integer(in: 1...53, default: 12))], response: Attempts.HistoryResponse.self)
    static let myHistory = APIOperation(
        .get, "/v1/me/history", id: "myHistory", service: .progress,
        summary: "Contribution history across everything the caller does: tasks done per local day over the last weeks (12 by default).",
        query: [.init("weeks", "How many weeks back.", schema: .integer(in: 1...53, default: 12))], response: Attempts.HistoryResponse.self)
    static let myPoints = APIOperation(
        .get, "/v1/me/points", id: "myPoints", service: .progress,
        summary: "Total points, and this week's (Monday to Sunday) and this month's in the caller's time zone.", response: PointsSummary.self)
    static let myLedger = APIOperation(
        .get, "/v1/me/points/ledger", id: "myPointsLedger", service: .progress,
        summary: "The points ledger, newest first: every award or correction with its reason.",
        query: APIOperation.QueryParameter.pagination, response: Page<LedgerEntryView>.self)
    static let attemptPhotos = APIOperation(
        .get, "/v1/attempts/{attemptID}/photos", id: "attemptPhotos", service: .progress,
        summary: "The photo gallery of one of the caller's attempts.", query: APIOperation.QueryParameter.pagination, response: Page<PhotoView>.self)
    static let challengePhotos = APIOperation(
        .get, "/v1/challenges/{challengeID}/photos", id: "challengePhotos", service: .progress,
        summary: "A competition's photo gallery, for its participants (others see only their own photos).",
        query: APIOperation.QueryParameter.pagination, response: Page<PhotoView>.self)
    static let getPhoto = APIOperation(
        .get, "/v1/photos/{photoID}", id: "getPhoto", service: .progress,
        summary: "A photo's bytes, in the media type it was uploaded as, for those allowed to see it (cacheable privately for a day).",
        responseMediaTypes: PhotoRules.contentTypes)
    static let choreOccurrences = APIOperation(
        .get, "/v1/groups/{groupID}/chore-occurrences", id: "listChoreOccurrences", service: .progress,
        summary: "A household's chore occurrences: pending ones by due time (overdue flagged), or completed ones.",
        query: [.init("status", "Pending occurrences (by due time) or completed ones.", schema: JSONSchema.of(ChoreOccurrenceStatus.self).refined(.init(default: "pending")))]
            + APIOperation.QueryParameter.pagination,
        response: Page<ChoreOccurrence>.self)
    static let completeChore = APIOperation(
        .post, "/v1/chore-occurrences/{occurrenceID}/complete", id: "completeChore", service: .progress,
        summary: "Complete a chore: its points go to the caller and the next occurrence becomes due per the recurrence.",
        response: ChoresController.CompletedResponse.self, problems: [.choreAlreadyCompleted], idempotent: true)

    static let all = [
        startAttempt, listAttempts, getAttempt, restartAttempt, abandonAttempt, pauseAttempt, resumeAttempt, skipDay, startVacation, endVacation,
        setTask, logQuantity, removeLog, attachPhoto, calendar,
        attemptHistory, myHistory, myPoints, myLedger, attemptPhotos, challengePhotos, getPhoto, choreOccurrences, completeChore,
    ]
}
