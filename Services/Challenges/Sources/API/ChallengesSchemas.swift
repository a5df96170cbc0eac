import ChallengesDomain
import SurgeContracts

// What the OpenAPI document says about the fields of drafts and patches beyond their Swift types: the limits
// `DraftValidation` checks (`DraftLimits`), and examples. The rule types are shared with responses, which keep to the
// same limits.

enum ChallengesSchemas {
    static let name = JSONSchema.Refinement.text(maxLength: DraftLimits.name.upperBound, nonBlank: true, example: "Hydration week")
    static let description = JSONSchema.Refinement(maxLength: DraftLimits.description)
    static let category = JSONSchema.Refinement(
        minLength: DraftLimits.category.lowerBound, maxLength: DraftLimits.category.upperBound, pattern: JSONSchema.Refinement.textPattern(nonBlank: true), example: "fitness")
    static let durationDays = JSONSchema.Refinement.range(DraftLimits.duration)
    static let dailyMinutes = JSONSchema.Refinement.range(DraftLimits.dailyMinutes)
    static let tasks = JSONSchema.Refinement(minItems: DraftLimits.tasks.lowerBound, maxItems: DraftLimits.tasks.upperBound)
    static let unit = JSONSchema.Refinement.text(maxLength: Units.maxLength, nonBlank: true, controls: false, example: "litres")

    static let definition: [String: JSONSchema.Refinement] = [
        "name": name, "description": description, "category": category, "durationDays": durationDays,
        "estimatedDailyMinutes": dailyMinutes, "tasks": tasks, "badges": .init(maxItems: ChallengeBadge.maximumCount),
    ]
}

extension ChallengeDraft: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ChallengesSchemas.definition }
}

extension ChallengePatch: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ChallengesSchemas.definition }
}

extension TaskDraft: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        [
            "taskID": .init(pattern: "^\(DraftLimits.taskIDPattern)$", example: "push-ups"),
            "title": .text(maxLength: DraftLimits.taskTitle.upperBound, nonBlank: true, example: "Drink water"),
            "details": .init(maxLength: DraftLimits.taskDetails),
            "target": .init(exclusiveMinimum: 0, maximum: DraftLimits.target, example: 2),
            "targetFromDailyGoal": .init(exclusiveMinimum: 0, maximum: 100, description: "Weekly challenges only."),
            "unit": ChallengesSchemas.unit,
            "points": .range(DraftLimits.taskPoints),
        ]
    }
}

extension RulesDraft: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ["checkInGraceMinutes": .range(DraftLimits.graceMinutes)] }
}

extension ChoreDraft: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["points": .range(DraftLimits.chorePoints, default: 1), "reminderLeadMinutes": .range(DraftLimits.choreReminderLeadMinutes, default: 60)]
    }
}

extension ChallengeBadge: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        [
            "id": .init(pattern: ChallengeBadge.idPattern, example: "winner"),
            "title": .text(maxLength: ChallengeBadge.titleLength, nonBlank: true, example: "Plank Cup winner"),
            "description": .init(maxLength: ChallengeBadge.descriptionLength),
            "icon": .init(pattern: ChallengeBadge.idPattern, example: "trophy"),
        ]
    }
}

extension ChallengeBadgeRule: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["threshold": .range(ChallengeBadge.thresholds)]
    }
}

extension InvitationRequest: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ["userIDs": .init(maxItems: InvitationRequest.maxUsers)] }
}

extension Cadence: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["timesPerWeek": .range(DraftLimits.timesPerWeek), "weekdays": .init(minItems: 1, uniqueItems: true)]
    }
}

extension FailureRule: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ["allowedMissedDays": .init(minimum: 1)] }
}

extension StreakRule: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["freezesPerMonth": .range(DraftLimits.freezesPerMonth), "weeklyGoalDays": .range(DraftLimits.weeklyGoalDays)]
    }
}

extension PauseRule: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        [
            "maxDaysPerPause": .range(DraftLimits.daysPerPause), "pausesPerMonth": .range(DraftLimits.pausesPerMonth),
            "pausesPerAttempt": .range(DraftLimits.pausesPerAttempt), "skipDaysPerMonth": .range(DraftLimits.skipDaysPerMonth),
            "restWeekdays": .init(maxItems: DraftLimits.restWeekdays),
        ]
    }
}

extension PointsRule: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["pointsPerTask": .range(DraftLimits.taskPoints), "weeklyGoalBonus": .range(DraftLimits.bonus), "completionBonus": .range(DraftLimits.bonus)]
    }
}

extension SeriesFormula: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        [
            "basePoints": .init(exclusiveMinimum: 0), "repMultiplier": .init(exclusiveMinimum: 0), "seriesMultiplier": .init(exclusiveMinimum: 0),
            "streakMultipliers": .init(minItems: 1), "capBands": .init(minItems: 1), "levelThresholds": .init(minimum: 1),
        ]
    }
}

extension StreakMultiplier: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] { ["fromStreak": .init(minimum: 0), "multiplier": .init(minimum: 1)] }
}

extension CapBand: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["fromLevel": .init(minimum: 1), "multiplierOfDailyGoal": .init(exclusiveMinimum: 1, maximum: 100)]
    }
}

extension ChoreRecurrence: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["dayOfMonth": .range(DraftLimits.dayOfMonth), "weekdays": .init(minItems: 1, uniqueItems: true)]
    }
}

extension HabitDetails: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        [
            "colour": .init(pattern: "^#[0-9A-Fa-f]{6}$", example: "#FF8800"), "notes": .init(maxLength: DraftLimits.habitNotes),
            "priority": .range(DraftLimits.priority),
        ]
    }
}

extension CompetitionDetails: JSONSchemaRefined {
    public static var fieldRefinements: [String: JSONSchema.Refinement] {
        ["timeZone": .ianaTimeZone, "unit": ChallengesSchemas.unit]
    }
}

// The rules `DraftValidation` applies across the fields of one object, by cases of one field's value, and those of a
// challenge's kind on its tasks and badges. Other rules across objects (task points on the points rule, a competition's
// window on its own instants, its task's unit on its own) are in the fields' descriptions and the problem the server
// answers.

extension ChallengeDraft: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        let kinds: [ChallengeKind: [String]] = [
            .chore: ["habit", "competition"], .habit: ["chore", "competition", "groupID"],
            .weekly: ["chore", "habit", "competition", "groupID"], .competition: ["chore", "habit", "durationDays"],
        ]
        func others(_ kind: ChallengeKind) -> [String] { kinds[kind] ?? [] }
        // A quantity task's target: fixed in a habit, fixed or from the participant's daily goal in a weekly challenge,
        // optional in a competition (the most wins); `DraftValidation.checkQuantity`.
        func quantity(required: [String] = [], exactlyOne: [String] = []) -> [String: [JSONSchema.Case]] {
            ["tasks": [.init(when: "kind", is: ["quantity"], required: required, exactlyOne: exactlyOne, absent: exactlyOne.isEmpty ? ["targetFromDailyGoal"] : [])]]
        }
        // The badge rules that can be about a challenge of the kind (`DraftValidation.checkBadgeRule`).
        func badges(_ kinds: [ChallengeBadgeRule.Kind]) -> [String: [JSONSchema.Value]] { ["badges[].rule.kind": kinds.map { .string($0.rawValue) }] }
        return [
            .init(when: "kind", is: [ChallengeKind.curated.rawValue], refused: true),
            .init(
                when: "kind", is: ["chore"], required: ["groupID", "chore"], absent: ["tasks", "durationDays"] + others(.chore),
                allowed: ["visibility": ["group"]].merging(badges([.streak])) { $1 }),
            .init(
                when: "kind", is: ["habit"], absent: others(.habit),
                allowed: ["visibility": ["private"]].merging(badges([.streak, .challengeCompleted])) { $1 }, each: quantity(required: ["target"])),
            .init(
                when: "kind", is: ["weekly"], required: ["tasks"], absent: others(.weekly),
                allowed: ["visibility": ["private"]].merging(badges([.streak, .challengeCompleted])) { $1 },
                each: quantity(exactlyOne: ["target", "targetFromDailyGoal"])),
            .init(
                when: "kind", is: ["competition"], required: ["competition"], absent: others(.competition),
                allowed: ["visibility": ["public", "private", "group"]], each: quantity(),
                nested: [
                    .init(when: "visibility", is: ["group"], required: ["groupID"]),
                    .init(when: "visibility", is: ["public", "private"], byDefault: true, absent: ["groupID"]),
                ]),
        ]
    }
}

extension TaskDraft: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "kind", is: ["checkbox", "photo"], absent: ["target", "targetFromDailyGoal", "unit"]),
            .init(when: "kind", is: ["quantity"], required: ["unit"]),
        ]
    }
}

extension ChallengeBadgeRule: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "kind", is: ["streak"], required: ["threshold"], absent: ["window"]),
            .init(when: "kind", is: ["firstPlace"], absent: ["threshold"]),
            .init(when: "kind", is: ["challengeCompleted"], absent: ["threshold", "window"]),
        ]
    }
}

extension Cadence: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "kind", is: ["weekdays"], required: ["weekdays"], absent: ["timesPerWeek"]),
            .init(when: "kind", is: ["timesPerWeek"], required: ["timesPerWeek"], absent: ["weekdays"]),
            .init(when: "kind", is: ["daily", "weekly", "monthly"], byDefault: true, absent: ["weekdays", "timesPerWeek"]),
        ]
    }
}

extension ChoreRecurrence: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "kind", is: ["weekly"], required: ["weekdays"], absent: ["dayOfMonth"]),
            .init(when: "kind", is: ["monthly"], absent: ["weekdays"]),
            .init(when: "kind", is: ["none", "daily"], byDefault: true, absent: ["weekdays", "dayOfMonth"]),
        ]
    }
}

extension FailureRule: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "mode", is: ["tolerant"], required: ["allowedMissedDays"]),
            .init(when: "mode", is: ["strict", "none"], byDefault: true, absent: ["allowedMissedDays"]),
        ]
    }
}

extension StreakRule: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [.init(when: "period", is: ["day"], byDefault: true, absent: ["weeklyGoalDays"], allowed: ["activityKeepsWeeklyStreak": [false]])]
    }
}

extension PointsRule: JSONSchemaCased {
    public static var fieldCases: [JSONSchema.Case] {
        [
            .init(when: "kind", is: ["series"], required: ["series"], absent: ["pointsPerTask"]),
            .init(when: "kind", is: ["perTask"], absent: ["series"]),
            .init(when: "kind", is: ["none"], byDefault: true, absent: ["pointsPerTask", "series"]),
        ]
    }
}
