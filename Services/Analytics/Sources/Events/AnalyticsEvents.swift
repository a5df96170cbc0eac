import AnalyticsDomain
import Foundation
import Logging
import PostgresNIO
import SurgeCalendar
import SurgeContracts
import SurgeMessaging

/// What analytics consumes, as an analyst's own consumer would: the public identity and progress events, turned into
/// facts (`Facts`). It produces nothing. The user's own actions (registering, starting, restarting, abandoning,
/// pausing, checking in, undoing, editing the profile or preferences) are activity; the day judge's verdicts are not.
enum AnalyticsEvents {
    static func register(in handlers: inout EventHandlers) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            let user = event.data
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(user.userID, at: user.registeredAt) else { return }
            let calendar = LocalCalendar(zoneNamedOrUTC: user.timeZone)
            try await facts.register(user.userID, timeZone: user.timeZone, at: user.registeredAt, cohortDate: calendar.date(at: user.registeredAt))
        }
        handlers.on(UserUpgraded.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.upgradedAt, connection, logger)
        }
        handlers.on(ProfileChanged.self) { event, connection, logger in
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(event.data.userID, at: event.data.changedAt) else { return }
            try await facts.moveZone(event.data.userID, to: event.data.timeZone)
            try await facts.activity(event.data.userID, at: event.data.changedAt)
        }
        handlers.on(PreferencesChanged.self) { event, connection, logger in
            let preferences = event.data
            let facts = Facts(connection: connection, logger: logger)
            switch TelemetryTransition.of(
                optOut: preferences.telemetryOptOut, at: preferences.changedAt, currentlyOptedOut: try await facts.isOptedOut(preferences.userID))
            {
            case .optedOut(let time): try await facts.optOut(preferences.userID, at: time)
            case .optedIn(let time): try await facts.optIn(preferences.userID, at: time)
            case .unchanged: break
            }
            try await recordActivity(preferences.userID, at: preferences.changedAt, connection, logger)
        }
        handlers.on(UserDeleted.self) { event, connection, logger in
            try await Facts(connection: connection, logger: logger).erase(event.data.userID)
        }

        handlers.on(AttemptStarted.self) { event, connection, logger in
            let attempt = event.data
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(attempt.userID, at: attempt.startedAt) else { return }
            try await facts.attemptStarted(attempt.attemptID, userID: attempt.userID, at: attempt.startedAt)
            try await facts.activity(attempt.userID, at: attempt.startedAt)
        }
        handlers.on(AttemptRestarted.self) { event, connection, logger in
            let restart = event.data
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(restart.userID, at: restart.restartedAt) else { return }
            try await facts.attemptRestarted(restart.previousAttemptID, userID: restart.userID, at: restart.restartedAt)
            try await facts.activity(restart.userID, at: restart.restartedAt)
        }
        handlers.on(AttemptEnded.self) { event, connection, logger in
            let ended = event.data
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(ended.userID, at: ended.endedAt) else { return }
            try await facts.attemptEnded(ended.attemptID, userID: ended.userID, on: ended.endedOn, at: ended.endedAt, outcome: ended.end)
            if Definitions.isUserAction(ended.end) { try await facts.activity(ended.userID, at: ended.endedAt) }
        }
        handlers.on(AttemptPaused.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.pausedAt, connection, logger)
        }
        handlers.on(AttemptResumed.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.resumedAt, connection, logger)
        }
        handlers.on(CheckInRecorded.self) { event, connection, logger in
            let checkIn = event.data
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(checkIn.userID, at: checkIn.recordedAt) else { return }
            try await facts.checkInDay(checkIn.userID, on: checkIn.localDate, at: checkIn.recordedAt)
            try await facts.activity(checkIn.userID, at: checkIn.recordedAt)
        }
        handlers.on(CheckInUndone.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.recordedAt, connection, logger)
        }
        handlers.on(DayJudged.self) { event, connection, logger in
            let day = event.data
            guard day.period == .day, Definitions.expectsWork(day.outcome) else { return }
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(day.userID, at: day.judgedAt) else { return }
            try await facts.activeDay(day.attemptID, userID: day.userID, on: day.localDate, at: day.judgedAt)
        }
        handlers.on(StreakChanged.self) { event, connection, logger in
            let streak = event.data
            guard Definitions.isBreak(streak.change, previous: streak.previous) else { return }
            let facts = Facts(connection: connection, logger: logger)
            guard try await facts.mayRecord(streak.userID, at: streak.changedAt) else { return }
            try await facts.streakBreak(streak.attemptID, userID: streak.userID, on: streak.localDate, length: streak.previous, at: streak.changedAt)
        }
    }

    private static func recordActivity(_ userID: UUID, at time: Date, _ connection: PostgresConnection, _ logger: Logger) async throws {
        let facts = Facts(connection: connection, logger: logger)
        guard try await facts.mayRecord(userID, at: time) else { return }
        try await facts.activity(userID, at: time)
    }
}
