import Foundation

/// Someone started (or restarted) an attempt at a challenge, habit, competition or weekly challenge.
public struct AttemptStarted: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.progress.attempt.started.v1", topic: .progress,
        summary: "A user started an attempt (a first start or a restart after failure) at a challenge.")

    public var attemptID: UUID
    public var userID: UUID
    public var challengeID: UUID
    public var challengeVersion: Int
    public var kind: ChallengeKind
    /// 1 for the first attempt at this challenge, 2 after one restart, ...
    public var attemptNumber: Int
    /// The user's local date of day 1.
    public var startedOn: LocalDate
    public var timeZone: String
    public var groupID: UUID?
    public var startedAt: Date

    public init(
        attemptID: UUID, userID: UUID, challengeID: UUID, challengeVersion: Int, kind: ChallengeKind, attemptNumber: Int,
        startedOn: LocalDate, timeZone: String, groupID: UUID?, startedAt: Date
    ) {
        self.attemptID = attemptID
        self.userID = userID
        self.challengeID = challengeID
        self.challengeVersion = challengeVersion
        self.kind = kind
        self.attemptNumber = attemptNumber
        self.startedOn = startedOn
        self.timeZone = timeZone
        self.groupID = groupID
        self.startedAt = startedAt
    }

    public var partitionKey: String { userID.key }
    public var subject: String { "attempts/\(attemptID.key)" }
}
