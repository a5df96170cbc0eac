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
    static func register(in routes: inout ConsumerRoutes<Facts>) {
        routes.on(UserRegistered.self) { event, facts in
            let user = event.data
            let calendar = try calendar(user.timeZone)
            try await ifRecorded(user.userID, at: user.registeredAt, facts) { facts in
                try await facts.register(user.userID, timeZone: user.timeZone, at: user.registeredAt, cohortDate: calendar.date(at: user.registeredAt))
            }
        }
        routes.on(UserUpgraded.self) { event, facts in
            try await facts.recordActivity(of: event.data.userID, at: event.data.upgradedAt)
        }
        routes.on(ProfileChanged.self) { event, facts in
            let profile = event.data
            _ = try calendar(profile.timeZone)
            try await ifRecorded(profile.userID, at: profile.changedAt, facts) { facts in
                try await facts.moveZone(profile.userID, to: profile.timeZone)
                try await facts.activity(profile.userID, at: profile.changedAt)
            }
        }
        routes.on(PreferencesChanged.self) { event, facts in
            let preferences = event.data
            switch TelemetryTransition.of(
                optOut: preferences.telemetryOptOut, at: preferences.changedAt, currentlyOptedOut: try await facts.isOptedOut(preferences.userID))
            {
            case .optedOut(let time): try await facts.optOut(preferences.userID, at: time)
            case .optedIn(let time): try await facts.optIn(preferences.userID, at: time)
            case .unchanged: break
            }
            try await facts.recordActivity(of: preferences.userID, at: preferences.changedAt)
        }
        routes.on(UserDeleted.self) { event, facts in
            try await facts.erase(event.data.userID)
        }

        routes.on(AttemptStarted.self) { event, facts in
            let attempt = event.data
            try await ifRecorded(attempt.userID, at: attempt.startedAt, facts) { facts in
                try await facts.attemptStarted(attempt.attemptID, userID: attempt.userID, at: attempt.startedAt)
                try await facts.activity(attempt.userID, at: attempt.startedAt)
            }
        }
        routes.on(AttemptRestarted.self) { event, facts in
            let restart = event.data
            try await ifRecorded(restart.userID, at: restart.restartedAt, facts) { facts in
                try await facts.attemptRestarted(restart.previousAttemptID, userID: restart.userID, at: restart.restartedAt)
                try await facts.activity(restart.userID, at: restart.restartedAt)
            }
        }
        routes.on(AttemptEnded.self) { event, facts in
            let ended = event.data
            try await ifRecorded(ended.userID, at: ended.endedAt, facts) { facts in
                try await facts.attemptEnded(ended.attemptID, userID: ended.userID, on: ended.endedOn, at: ended.endedAt, outcome: ended.end)
                if Definitions.isUserAction(ended.end) { try await facts.activity(ended.userID, at: ended.endedAt) }
            }
        }
        routes.on(AttemptPaused.self) { event, facts in
            try await facts.recordActivity(of: event.data.userID, at: event.data.pausedAt)
        }
        routes.on(AttemptResumed.self) { event, facts in
            try await facts.recordActivity(of: event.data.userID, at: event.data.resumedAt)
        }
        routes.on(CheckInRecorded.self) { event, facts in
            let checkIn = event.data
            try await facts.recordActivity(of: checkIn.userID, at: checkIn.recordedAt, checkInOn: checkIn.localDate)
        }
        routes.on(CheckInUndone.self) { event, facts in
            try await facts.recordActivity(of: event.data.userID, at: event.data.recordedAt)
        }
        routes.on(DayJudged.self, when: { $0.data.period == .day && Definitions.expectsWork($0.data.outcome) }) { event, facts in
            let day = event.data
            try await ifRecorded(day.userID, at: day.judgedAt, facts) { facts in
                try await facts.activeDay(day.attemptID, userID: day.userID, on: day.localDate, at: day.judgedAt)
            }
        }
        routes.on(StreakChanged.self, when: { Definitions.isBreak($0.data.change, previous: $0.data.previous) }) { event, facts in
            let streak = event.data
            try await ifRecorded(streak.userID, at: streak.changedAt, facts) { facts in
                try await facts.streakBreak(streak.attemptID, userID: streak.userID, on: streak.localDate, length: streak.previous, at: streak.changedAt)
            }
        }
    }

    /// Writes what `body` writes unless the user is erased, or was opted out of telemetry at `time`.
    private static func ifRecorded(_ userID: UUID, at time: Date, _ facts: Facts, _ body: (Facts) async throws -> Void) async throws {
        guard try await facts.mayRecord(userID, at: time) else { return }
        try await body(facts)
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
