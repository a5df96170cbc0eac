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
            let calendar = try calendar(user.timeZone)
            try await ifRecorded(user.userID, at: user.registeredAt, connection, logger) { facts in
                try await facts.register(user.userID, timeZone: user.timeZone, at: user.registeredAt, cohortDate: calendar.date(at: user.registeredAt))
            }
        }
        handlers.on(UserUpgraded.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.upgradedAt, connection, logger)
        }
        handlers.on(ProfileChanged.self) { event, connection, logger in
            let profile = event.data
            _ = try calendar(profile.timeZone)
            try await ifRecorded(profile.userID, at: profile.changedAt, connection, logger) { facts in
                try await facts.moveZone(profile.userID, to: profile.timeZone)
                try await facts.activity(profile.userID, at: profile.changedAt)
            }
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
            try await ifRecorded(attempt.userID, at: attempt.startedAt, connection, logger) { facts in
                try await facts.attemptStarted(attempt.attemptID, userID: attempt.userID, at: attempt.startedAt)
                try await facts.activity(attempt.userID, at: attempt.startedAt)
            }
        }
        handlers.on(AttemptRestarted.self) { event, connection, logger in
            let restart = event.data
            try await ifRecorded(restart.userID, at: restart.restartedAt, connection, logger) { facts in
                try await facts.attemptRestarted(restart.previousAttemptID, userID: restart.userID, at: restart.restartedAt)
                try await facts.activity(restart.userID, at: restart.restartedAt)
            }
        }
        handlers.on(AttemptEnded.self) { event, connection, logger in
            let ended = event.data
            try await ifRecorded(ended.userID, at: ended.endedAt, connection, logger) { facts in
                try await facts.attemptEnded(ended.attemptID, userID: ended.userID, on: ended.endedOn, at: ended.endedAt, outcome: ended.end)
                if Definitions.isUserAction(ended.end) { try await facts.activity(ended.userID, at: ended.endedAt) }
            }
        }
        handlers.on(AttemptPaused.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.pausedAt, connection, logger)
        }
        handlers.on(AttemptResumed.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.resumedAt, connection, logger)
        }
        handlers.on(CheckInRecorded.self) { event, connection, logger in
            let checkIn = event.data
            try await Facts(connection: connection, logger: logger).recordActivity(of: checkIn.userID, at: checkIn.recordedAt, checkInOn: checkIn.localDate)
        }
        handlers.on(CheckInUndone.self) { event, connection, logger in
            try await recordActivity(event.data.userID, at: event.data.recordedAt, connection, logger)
        }
        handlers.on(DayJudged.self, when: { $0.data.period == .day && Definitions.expectsWork($0.data.outcome) }) { event, connection, logger in
            let day = event.data
            try await ifRecorded(day.userID, at: day.judgedAt, connection, logger) { facts in
                try await facts.activeDay(day.attemptID, userID: day.userID, on: day.localDate, at: day.judgedAt)
            }
        }
        handlers.on(StreakChanged.self, when: { Definitions.isBreak($0.data.change, previous: $0.data.previous) }) { event, connection, logger in
            let streak = event.data
            try await ifRecorded(streak.userID, at: streak.changedAt, connection, logger) { facts in
                try await facts.streakBreak(streak.attemptID, userID: streak.userID, on: streak.localDate, length: streak.previous, at: streak.changedAt)
            }
        }
    }

    /// Writes what `body` writes unless the user is erased, or was opted out of telemetry at `time`.
    private static func ifRecorded(
        _ userID: UUID, at time: Date, _ connection: PostgresConnection, _ logger: Logger, _ body: (Facts) async throws -> Void
    ) async throws {
        let facts = Facts(connection: connection, logger: logger)
        guard try await facts.mayRecord(userID, at: time) else { return }
        try await body(facts)
    }

    private static func recordActivity(_ userID: UUID, at time: Date, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await Facts(connection: connection, logger: logger).recordActivity(of: userID, at: time)
    }

    /// The user's zone, which local days (and PostgreSQL's `AT TIME ZONE`) are computed in: an event naming no IANA
    /// zone is refused, so it ends on the dead-letter topic instead of in the facts.
    private static func calendar(_ zone: String) throws -> LocalCalendar {
        guard let calendar = LocalCalendar(zoneNamed: zone) else { throw InvalidTimeZone(zone: zone) }
        return calendar
    }
}

struct InvalidTimeZone: Error, CustomStringConvertible {
    var zone: String
    var description: String { "\(zone.debugDescription) is not an IANA time zone" }
}
