import Foundation

extension CloudEvent {
    /// An example event as the producer of `Payload`'s topic publishes it (source `/surge/<producer>`), at `time`:
    /// `data` is given the same instant for the payload's own timestamp, as the outbox writes both.
    public static func example(id: String, time: String, _ data: (Date) -> Payload) -> CloudEvent {
        guard let id = UUID(uuidString: id), let instant = Timestamp.parse(time) else {
            preconditionFailure("an example needs a UUID and an RFC 3339 time, got \(id) and \(time)")
        }
        return CloudEvent(id: id, source: "/surge/\(Payload.descriptor.topic.producer)", time: instant, data: data(instant))
    }
}

/// The people, group and challenges the catalogue's examples share, so that they read as one story: Giulia (in
/// Europe/Rome) reads every evening, shares a flat with Marco, and invites him to a water competition.
enum Example {
    static func id(_ text: String) -> UUID {
        guard let id = UUID(uuidString: text) else { preconditionFailure("not a UUID: \(text)") }
        return id
    }

    static func date(_ text: String) -> LocalDate {
        guard let date = LocalDate(text) else { preconditionFailure("not a local date: \(text)") }
        return date
    }

    static func time(_ text: String) -> LocalTime {
        guard let time = LocalTime(text) else { preconditionFailure("not a local time: \(text)") }
        return time
    }

    static func instant(_ text: String) -> Date {
        guard let instant = Timestamp.parse(text) else { preconditionFailure("not an RFC 3339 instant: \(text)") }
        return instant
    }

    static let giulia = id("4d1fefc0-fab3-4841-a2ce-69b8ed7dc573")
    static let marco = id("495ff151-32f0-4e41-b03b-2e58494b28be")
    static let flat = id("c79a9968-f49f-4509-8ef9-62d0666497f0")
    static let readingHabit = id("f6bb915b-0934-4e7e-a99e-9053427ffd29")
    static let readingAttempt = id("9f1ab338-d849-4d38-9a3b-f313e4e247b9")
    static let waterCompetition = id("cbf71a16-d82a-4850-a184-51abe4e1311f")
    static let bathroomChore = id("3aab8585-dbea-4c47-bf9a-cd428b860dc6")
    /// The curated 75 Hard's id, as the content library seeds it.
    static let seventyFiveHard = id("c4a11e00-0075-4000-8000-000000000001")

    /// Giulia's reading habit, version 1.
    static let readingDefinition = ChallengeDefinition(
        challengeID: readingHabit, version: 1, effectiveFrom: nil, kind: .habit, name: "Read 10 pages",
        description: "Ten pages of a book every day, any book.", category: "learning", difficulty: .beginner, visibility: .private,
        ownerID: giulia, groupID: nil, durationDays: nil, estimatedDailyMinutes: 20,
        tasks: [ChallengeTask(taskID: "read", title: "Read 10 pages", kind: .quantity, target: 10, unit: "pages")],
        rules: ChallengeRules(
            failure: FailureRule(mode: .none), streak: StreakRule(period: .day, freezesPerMonth: 2),
            points: PointsRule(kind: .perTask, pointsPerTask: 10), checkInGraceMinutes: 120, pause: PauseRule(mode: .pausesStreak)),
        habit: HabitDetails(colour: "#3A7BD5", notes: nil, priority: 2, reminderTime: time("21:30")))
}
