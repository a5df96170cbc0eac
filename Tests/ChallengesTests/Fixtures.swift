import Foundation
import SurgeContracts
import SurgeRuntime

@testable import ChallengesDomain
@testable import ChallengesService

/// Valid drafts of every kind, to break one rule at a time.
enum Fixtures {
    static let caller = UUID(uuidString: "11111111-1111-4111-8111-111111111111")!
    static let housemate = UUID(uuidString: "22222222-2222-4222-8222-222222222222")!
    static let stranger = UUID(uuidString: "33333333-3333-4333-8333-333333333333")!
    static let household = UUID(uuidString: "44444444-4444-4444-8444-444444444444")!

    static let user = DraftContext(source: .user(caller))
    static let member = DraftContext(source: .user(caller), groupMembers: [caller, housemate])

    static func instant(_ text: String) -> Date { Timestamp.parse(text)! }

    /// "Most water this week": Monday 1 June 2026 to Monday 8 June 2026, midnight in Rome: exactly 7 local days.
    static var competition: ChallengeDraft {
        ChallengeDraft(
            kind: .competition, name: "Most water this week",
            fields: DraftFields(
                description: "Who drinks the most water, Monday to Sunday?", visibility: .private,
                competition: CompetitionDetails(
                    startsAt: instant("2026-05-31T22:00:00Z"), endsAt: instant("2026-06-07T22:00:00Z"), timeZone: "Europe/Rome", unit: "litres")))
    }

    static var habit: ChallengeDraft {
        ChallengeDraft(
            kind: .habit, name: "Guitar practice",
            fields: DraftFields(
                description: "Scales and one song",
                habit: HabitDetails(colour: "#FF8800", notes: "Start slow", priority: 2, reminderTime: LocalTime("19:00"))))
    }

    static var chore: ChallengeDraft {
        ChallengeDraft(
            kind: .chore, name: "Take out the bins",
            fields: DraftFields(
                groupID: household,
                chore: ChoreDraft(
                    assigneeID: housemate, firstDueOn: LocalDate("2026-06-01")!, dueTime: LocalTime("20:00"),
                    recurrence: ChoreRecurrence(kind: .weekly, weekdays: [.monday, .thursday]), points: 3)))
    }

    static var weekly: ChallengeDraft {
        ChallengeDraft(
            kind: .weekly, name: "Squats this week",
            fields: DraftFields(tasks: [
                TaskDraft(
                    taskID: "squats", title: "Squats this week", kind: .quantity, targetFromDailyGoal: 7, unit: "squats",
                    cadence: Cadence(kind: .weekly))
            ]))
    }

    /// A content definition with a duration, for the rules that need one.
    static func curated(durationDays: Int? = 30, tasks: [TaskDraft]? = nil, rules: RulesDraft? = nil) -> ChallengeDraft {
        ChallengeDraft(
            kind: .curated, name: "Test challenge",
            fields: DraftFields(
                description: "For tests", category: "fitness", difficulty: .moderate, visibility: .curated, durationDays: durationDays,
                estimatedDailyMinutes: 20, tasks: tasks ?? [TaskDraft(taskID: "move", title: "Move", kind: .checkbox)],
                rules: rules ?? RulesDraft(failure: FailureRule(mode: .strict), streak: StreakRule(), points: PointsRule(kind: .perTask, pointsPerTask: 10))))
    }

    static func task(_ kind: TaskKind = .checkbox, id: String = "task", target: Double? = nil, unit: String? = nil, cadence: Cadence? = nil) -> TaskDraft {
        TaskDraft(taskID: id, title: "A task", kind: kind, target: target, unit: unit, cadence: cadence)
    }
}
