import Foundation
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import ProgressService

@Suite("Progress routes: attempts", .tags(.integration), .kind(.integration))
struct AttemptsRouterTests {
    @Test("start, read, list, abandon and restart an attempt; the calendar, history, points, ledger and export answer")
    func lifecycle() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            #expect(attempt.challengeID == routes.habitID)
            #expect(attempt.status == "active" && attempt.dayNumber == 1 && attempt.startedOn == LocalDate("2026-11-24"))
            #expect(attempt.today?.remainingTaskIDs == ["walk", "water", "selfie"])

            let read = try await routes.call(.get, "/v1/attempts/\(attempt.attemptID)")
            #expect(read.status == .ok)
            #expect(try routes.decode(AttemptResponse.self, read).attempt.attemptID == attempt.attemptID)
            let list = try await routes.call(.get, "/v1/attempts?status=active&limit=1")
            #expect(try routes.decode(Page<AttemptView>.self, list).items.map(\.attemptID) == [attempt.attemptID])

            let calendar = try routes.decode(AttemptsController.CalendarResponse.self, try await routes.call(.get, "/v1/attempts/\(attempt.attemptID)/calendar"))
            #expect(calendar.month == "2026-11" && calendar.days.count == 30)
            #expect(calendar.days.first { $0.date == LocalDate("2026-11-24") }?.status == "open")
            let history = try routes.decode(AttemptsController.HistoryResponse.self, try await routes.call(.get, "/v1/me/history?weeks=2"))
            #expect(history.from == LocalDate("2026-11-16") && history.to == LocalDate("2026-11-24"))
            let points = try routes.decode(PointsSummary.self, try await routes.call(.get, "/v1/me/points"))
            #expect(points.total == 0 && points.weekStart == LocalDate("2026-11-23"))
            #expect(try routes.decode(Page<LedgerEntryView>.self, try await routes.call(.get, "/v1/me/points/ledger")).items.isEmpty)
            let export = try await routes.call(.get, "/internal/export")
            #expect(export.status == .ok && export.headers[.contentType] == "application/json")
            #expect(String(buffer: export.body).contains(attempt.attemptID.key))

            let abandoned = try await routes.call(.post, "/v1/attempts/\(attempt.attemptID)/abandon")
            #expect(try routes.decode(AttemptResponse.self, abandoned).attempt.status == "abandoned")
            let restarted = try await routes.call(.post, "/v1/attempts/\(attempt.attemptID)/restart")
            #expect(restarted.status == .created)
            let again = try routes.decode(AttemptResponse.self, restarted).attempt
            #expect(again.attemptNumber == 2 && again.status == "active")
        }
    }

    @Test("another user's attempt is not found; a second start conflicts; a bad filter names its field")
    func refusals() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            for (method, target) in [(HTTPRequest.Method.get, path), (.post, path + "/abandon"), (.post, path + "/restart"), (.get, path + "/calendar")] {
                #expect(try routes.problem(try await routes.call(method, target, as: routes.stranger), .notFound).type == ProblemType.notFound.uri)
            }
            let twice = try await routes.call(.post, "/v1/attempts", json: #"{"challengeID": "\#(routes.habitID)"}"#)
            #expect(try routes.problem(twice, .conflict).type == ProblemType.alreadyStarted.uri)
            _ = try await routes.call(.post, path + "/abandon")
            #expect(try routes.problem(try await routes.call(.post, path + "/abandon"), .conflict).type == ProblemType.attemptNotActive.uri)

            for (target, field) in [
                ("/v1/attempts?status=paused", "status"), ("/v1/attempts?challengeID=7", "challengeID"), (path + "/calendar?month=2026-13", "month"),
                ("/v1/me/history?weeks=54", "weeks"), ("/v1/me/points/ledger?limit=0", "limit"),
            ] {
                let problem = try routes.problem(try await routes.call(.get, target), .unprocessableContent)
                #expect(problem.errors?.map(\.field) == [field], "\(target)")
            }
            let unknownField = try await routes.call(.post, "/v1/attempts", json: #"{"challengeID": "\#(routes.habitID)", "colour": "red"}"#)
            #expect(try routes.problem(unknownField, .unprocessableContent).errors?.map(\.field) == ["colour"])
        }
    }
}

@Suite("Progress routes: check-ins and photos", .tags(.integration), .kind(.integration))
struct CheckInsRouterTests {
    @Test("a tick earns its points, a logged amount is taken back once, a photo ticks its task and is shown to its owner only")
    func checkIns() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            let ticked = try routes.decode(AttemptResponse.self, try await routes.call(.put, path + "/tasks/walk", json: #"{"done": true}"#)).attempt
            #expect(ticked.today?.tasks.first { $0.taskID == "walk" }?.done == true)
            #expect(ticked.stats.points == 5)

            let logged = try await routes.call(.post, path + "/tasks/water/logs", json: #"{"quantity": 2.5}"#)
            #expect(logged.status == .created)
            let log = try routes.decode(CheckInsController.LogResponse.self, logged)
            #expect(log.attempt.today?.tasks.first { $0.taskID == "water" }?.quantity == 2.5)
            let removed = try routes.decode(AttemptResponse.self, try await routes.call(.delete, path + "/logs/\(log.logID)")).attempt
            #expect(removed.today?.tasks.first { $0.taskID == "water" }?.quantity == 0)
            #expect(try routes.problem(try await routes.call(.delete, path + "/logs/\(log.logID)"), .conflict).type == ProblemType.alreadyRemoved.uri)

            let uploaded = try await routes.call(.put, path + "/tasks/selfie/photo", body: ProgressRouterHarness.png, contentType: "image/png")
            #expect(uploaded.status == .ok, "\(String(buffer: uploaded.body))")
            let photo = try routes.decode(CheckInsController.PhotoResponse.self, uploaded)
            #expect(photo.attempt.today?.tasks.first { $0.taskID == "selfie" }?.photoID == photo.photoID)
            let bytes = try await routes.call(.get, "/v1/photos/\(photo.photoID)")
            #expect(bytes.status == .ok && bytes.headers[.contentType] == "image/png" && bytes.body == ProgressRouterHarness.png)
            let gallery = try routes.decode(Page<PhotoView>.self, try await routes.call(.get, path + "/photos"))
            #expect(gallery.items.map(\.url) == ["/v1/photos/\(photo.photoID.key)"])
            let challengeGallery = try routes.decode(Page<PhotoView>.self, try await routes.call(.get, "/v1/challenges/\(routes.habitID)/photos"))
            #expect(challengeGallery.items.map(\.photoID) == [photo.photoID])
            #expect(try routes.problem(try await routes.call(.get, "/v1/photos/\(photo.photoID)", as: routes.stranger), .notFound).type == ProblemType.notFound.uri)
        }
    }

    @Test("another user's attempt is not found; bad check-ins name their field; an ended attempt takes none")
    func refusals() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            for (method, target, json) in [
                (HTTPRequest.Method.put, path + "/tasks/walk", #"{"done": true}"#), (.post, path + "/tasks/water/logs", #"{"quantity": 1}"#),
                (.delete, path + "/logs/\(UUID())", nil), (.get, path + "/photos", nil),
            ] {
                let problem = try routes.problem(try await routes.call(method, target, as: routes.stranger, json: json), .notFound)
                #expect(problem.type == ProblemType.notFound.uri, "\(method) \(target)")
            }
            let stranger = try await routes.call(.put, path + "/tasks/selfie/photo", as: routes.stranger, body: ProgressRouterHarness.png, contentType: "image/png")
            #expect(try routes.problem(stranger, .notFound).type == ProblemType.notFound.uri)

            for (method, target, json, field) in [
                (HTTPRequest.Method.put, path + "/tasks/run", #"{"done": true}"#, "taskID"),
                (.put, path + "/tasks/walk", #"{"done": "yes"}"#, "done"),
                (.post, path + "/tasks/water/logs", #"{"quantity": 1, "unit": "ml"}"#, "unit"),
                (.put, path + "/tasks/walk", #"{"done": true, "date": "2200-12-32"}"#, "date"),
            ] {
                let problem = try routes.problem(try await routes.call(method, target, json: json), .unprocessableContent)
                #expect(problem.errors?.map(\.field) == [field], "\(target) \(json)")
            }
            let notPhoto = try await routes.call(.put, path + "/tasks/walk/photo", body: ProgressRouterHarness.png, contentType: "image/png")
            #expect(try routes.problem(notPhoto, .unprocessableContent).errors?.map(\.field) == ["taskID"])
            let text = try await routes.call(.put, path + "/tasks/selfie/photo", body: ByteBuffer(string: "hello"), contentType: "text/plain")
            #expect(try routes.problem(text, .unsupportedMediaType).type == ProblemType.unsupportedMediaType.uri)
            let early = try await routes.call(.put, path + "/tasks/walk", json: #"{"done": true, "date": "2026-11-20"}"#)
            #expect(try routes.problem(early, .unprocessableContent).type == ProblemType.checkInBeforeStart.uri)

            _ = try await routes.call(.post, path + "/abandon")
            let ended = try await routes.call(.put, path + "/tasks/walk", json: #"{"done": true}"#)
            #expect(try routes.problem(ended, .conflict).type == ProblemType.attemptNotActive.uri)
        }
    }
}

@Suite("Progress routes: pauses and vacations", .tags(.integration), .kind(.integration))
struct PausesRouterTests {
    @Test("pause and resume an attempt; a vacation pauses every active attempt and ending it resumes them")
    func timeOff() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            let paused = try routes.decode(AttemptResponse.self, try await routes.call(.post, path + "/pause", json: #"{"days": 2}"#)).attempt
            #expect(paused.pauses.map(\.from) == [LocalDate("2026-11-24")] && paused.pauses.first?.through == LocalDate("2026-11-25"))
            #expect(paused.today?.paused == true)
            let resumed = try routes.decode(AttemptResponse.self, try await routes.call(.post, path + "/resume")).attempt
            #expect(resumed.today?.paused == false)

            let vacation = try routes.decode(PausesController.VacationResponse.self, try await routes.call(.post, "/v1/me/vacation", json: "{}"))
            #expect(vacation.paused.map(\.attemptID) == [attempt.attemptID] && vacation.notPaused.isEmpty)
            let back = try routes.decode(PausesController.ResumedResponse.self, try await routes.call(.delete, "/v1/me/vacation"))
            #expect(back.resumed.map(\.attemptID) == [attempt.attemptID])
        }
    }

    @Test("another user's attempt is not found; overlapping time off and nothing to resume conflict; a bad length names its field")
    func refusals() async throws {
        try await ProgressRouterHarness.run { routes in
            let attempt = try await routes.startHabit()
            let path = "/v1/attempts/\(attempt.attemptID)"
            for (target, json) in [(path + "/pause", "{}"), (path + "/resume", nil), (path + "/skip-day", nil)] {
                #expect(try routes.problem(try await routes.call(.post, target, as: routes.stranger, json: json), .notFound).type == ProblemType.notFound.uri)
            }
            for target in [path + "/pause", "/v1/me/vacation"] {
                let problem = try routes.problem(try await routes.call(.post, target, json: #"{"days": 0}"#), .unprocessableContent)
                #expect(problem.errors?.map(\.field) == ["days"], "\(target)")
            }
            #expect(try routes.problem(try await routes.call(.post, path + "/resume"), .conflict).type == ProblemType.notPaused.uri)
            #expect(try routes.problem(try await routes.call(.delete, "/v1/me/vacation"), .conflict).type == ProblemType.notPaused.uri)
            _ = try await routes.call(.post, path + "/pause", json: "{}")
            #expect(try routes.problem(try await routes.call(.post, path + "/pause", json: "{}"), .conflict).type == ProblemType.pauseOverlaps.uri)
            let vacation = try routes.decode(PausesController.VacationResponse.self, try await routes.call(.post, "/v1/me/vacation", json: "{}"))
            #expect(vacation.paused.isEmpty && vacation.notPaused.map(\.type) == [ProblemType.pauseOverlaps.uri])
        }
    }
}

@Suite("Progress routes: household chores", .tags(.integration), .kind(.integration))
struct ChoresRouterTests {
    @Test("a member sees the pending chore, completes it for its points, and finds it among the completed; the next one is due a week later")
    func completion() async throws {
        try await ProgressRouterHarness.run { routes in
            let list = "/v1/groups/\(routes.groupID)/chore-occurrences"
            let pending = try routes.decode(Page<ChoreOccurrence>.self, try await routes.call(.get, list))
            let occurrence = try #require(pending.items.first)
            #expect(pending.items.count == 1 && occurrence.choreID == routes.choreID && occurrence.dueOn == LocalDate("2026-11-25"))
            #expect(occurrence.status == "pending" && occurrence.points == 3 && occurrence.assigneeID == routes.user)

            let completed = try await routes.call(.post, "/v1/chore-occurrences/\(occurrence.occurrenceID)/complete")
            let done = try routes.decode(ChoresController.CompletedResponse.self, completed).occurrence
            #expect(done.status == "completed" && done.completedBy == routes.user)
            // The simulated clock runs on from `now` in real time, and the API answers in whole seconds.
            let completedAt = try #require(done.completedAt)
            #expect(completedAt >= ProgressRouterHarness.now && completedAt <= routes.clock.now())
            let history = try routes.decode(Page<ChoreOccurrence>.self, try await routes.call(.get, list + "?status=completed"))
            #expect(history.items.map(\.occurrenceID) == [occurrence.occurrenceID])
            let next = try routes.decode(Page<ChoreOccurrence>.self, try await routes.call(.get, list))
            #expect(next.items.map(\.dueOn) == [LocalDate("2026-12-02")])
            let points = try routes.decode(PointsSummary.self, try await routes.call(.get, "/v1/me/points"))
            #expect(points.total == 3)
        }
    }

    @Test("a chore is done once; a non-member finds neither the household nor its chores; a bad filter names its field")
    func refusals() async throws {
        try await ProgressRouterHarness.run { routes in
            let list = "/v1/groups/\(routes.groupID)/chore-occurrences"
            let occurrence = try #require(try routes.decode(Page<ChoreOccurrence>.self, try await routes.call(.get, list)).items.first)
            let complete = "/v1/chore-occurrences/\(occurrence.occurrenceID)/complete"
            #expect(try routes.problem(try await routes.call(.get, list, as: routes.stranger), .notFound).type == ProblemType.notFound.uri)
            #expect(try routes.problem(try await routes.call(.post, complete, as: routes.stranger), .notFound).type == ProblemType.notFound.uri)
            #expect(try routes.problem(try await routes.call(.get, list + "?status=overdue"), .unprocessableContent).errors?.map(\.field) == ["status"])
            _ = try await routes.call(.post, complete)
            #expect(try routes.problem(try await routes.call(.post, complete), .conflict).type == ProblemType.choreAlreadyCompleted.uri)
        }
    }
}
