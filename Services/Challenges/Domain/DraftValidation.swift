import Foundation
import SurgeCalendar
import SurgeContracts

/// What validation needs to know beyond the draft itself.
public struct DraftContext: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// The curated content file: may define curated challenges and system definitions.
        case content
        /// A user through the API.
        case user(UUID)
    }

    public var source: Source
    /// The current members of `draft.groupID`; nil when there is no group id or the group is unknown here.
    public var groupMembers: Set<UUID>?
    /// Whether the caller's and the assignee's membership are checked: on creation, and on edits that change the
    /// group or the chore (a member who left does not block unrelated edits).
    public var checksMembership: Bool
    /// The latest local date anywhere when the draft is saved (see `VersionSchedule.latestDate(at:)`): an attempt
    /// started now ends `durationDays` later, which must stay within the supported dates. Nil skips that check.
    public var today: LocalDate?

    public init(source: Source, groupMembers: Set<UUID>? = nil, checksMembership: Bool = true, today: LocalDate? = nil) {
        self.source = source
        self.groupMembers = groupMembers
        self.checksMembership = checksMembership
        self.today = today
    }

    public static let content = DraftContext(source: .content, checksMembership: false)
}

/// The limits definitions are validated against.
public enum DraftLimits {
    public static let name = 1...100
    public static let description = 2000
    public static let category = 1...40
    public static let duration = 1...365
    public static let dailyMinutes = 0...1440
    public static let tasks = 1...20
    public static let taskTitle = 1...100
    public static let taskDetails = 500
    /// Points values are bounded so that no challenge, curated or a user's own, makes one tick worth more than a
    /// good day in the library (10 a task, 200 for finishing): rankings among participants stay meaningful, and
    /// levels count curated points only (progress), so no value here can buy a higher anti-cheat cap.
    public static let taskPoints = 1...100
    public static let target = 1_000_000.0
    public static let freezesPerMonth = 0...4
    public static let weeklyGoalDays = 1...7
    public static let daysPerPause = 1...366
    public static let pausesPerMonth = 1...31
    public static let pausesPerAttempt = 1...100
    public static let skipDaysPerMonth = 1...10
    /// At least one weekday must count.
    public static let restWeekdays = 6
    public static let graceMinutes = 0...2880
    public static let bonus = 0...1000
    public static let chorePoints = 1...100
    /// Up to a day before the due time.
    public static let choreReminderLeadMinutes = 0...1440
    /// Series formula factors (001's push-ups: base 10, ×0.3 a rep, ×0.8 a series).
    public static let seriesBasePoints = 100.0
    public static let seriesMultipliers = 10.0
    public static let habitNotes = 1000
    public static let priority = 1...5
    public static let timesPerWeek = 1...7
    public static let dayOfMonth = 1...31
    public static let taskIDPattern = "[a-z0-9-]{1,40}"
}

extension ChallengeDraft {
    /// Every broken rule of the draft at once, each naming its field by its JSON path.
    public func validate(_ context: DraftContext) -> [FieldError] {
        var validation = DraftValidation(draft: self, context: context)
        validation.run()
        return validation.errors
    }

    /// The definition, or `brokenRules` listing every broken rule.
    public func build(
        challengeID: UUID, version: Int, effectiveFrom: LocalDate?, ownerID: UUID?, context: DraftContext
    ) throws(ChallengesError) -> ChallengeVersion {
        let errors = validate(context)
        guard errors.isEmpty else { throw .brokenRules(errors) }
        return definition(challengeID: challengeID, version: version, effectiveFrom: effectiveFrom, ownerID: ownerID)
    }
}

struct DraftValidation {
    let draft: ChallengeDraft
    let context: DraftContext
    var errors: [FieldError] = []

    init(draft: ChallengeDraft, context: DraftContext) {
        self.draft = draft
        self.context = context
    }

    mutating func fail(_ field: String, _ message: String) {
        errors.append(FieldError(field: field, message: message))
    }

    var isContent: Bool { context.source == .content }
    var kind: ChallengeKind { draft.kind }
    var duration: Int? { draft.resolvedDurationDays }
    var rules: ChallengeRules { draft.resolvedRules }

    mutating func run() {
        checkKind()
        checkTexts()
        checkVisibility()
        checkDuration()
        checkTasks()
        checkFailure()
        checkStreak()
        checkPause()
        checkPoints()
        checkKindDetails()
        checkBadges()
    }

    // MARK: Kind, texts, visibility

    mutating func checkKind() {
        if kind == .curated && !isContent {
            fail("kind", "curated challenges come from the content library; create a competition, habit, chore or weekly challenge")
        }
    }

    mutating func checkTexts() {
        let name = draft.name.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty {
            fail("name", "must not be empty")
        } else if name.count > DraftLimits.name.upperBound {
            fail("name", "must be at most \(DraftLimits.name.upperBound) characters")
        }
        if draft.resolvedDescription.count > DraftLimits.description {
            fail("description", "must be at most \(DraftLimits.description) characters")
        }
        let category = draft.resolvedCategory
        if !DraftLimits.category.contains(category.count) {
            fail("category", "must be 1 to \(DraftLimits.category.upperBound) characters")
        }
        if let minutes = draft.estimatedDailyMinutes, !DraftLimits.dailyMinutes.contains(minutes) {
            fail("estimatedDailyMinutes", "must be from 0 to 1440 (a day)")
        }
    }

    mutating func checkVisibility() {
        let visibility = draft.resolvedVisibility
        if visibility == .curated && !isContent {
            fail("visibility", "curated is reserved for the content library; use public, private or group")
        }
        if kind == .curated && visibility != .curated {
            fail("visibility", "a curated challenge is visible to everyone (curated)")
        }
        switch kind {
        case .chore where visibility != .group:
            fail("visibility", "a chore is visible to its household only (group)")
        case .habit where visibility != .private:
            fail("visibility", "a habit is private to its owner")
        case .weekly where visibility != .private && !(isContent && visibility == .curated):
            fail("visibility", "a weekly challenge is private to its owner")
        default:
            break
        }
        if visibility == .group && draft.groupID == nil {
            fail("groupID", kind == .chore ? "is required for a chore (the household)" : "is required for group visibility")
        }
        if let groupID = draft.groupID {
            if visibility != .group {
                // A chore's wrong visibility is already reported; its group id is right.
                if kind != .chore { fail("groupID", "is only for group visibility") }
            } else if context.checksMembership, case .user(let caller) = context.source,
                !(context.groupMembers?.contains(caller) ?? false)
            {
                fail("groupID", "is not a group you belong to (\(groupID.key))")
            }
        }
    }

    // MARK: Duration

    mutating func checkDuration() {
        if kind == .competition {
            if let given = draft.durationDays, let derived = duration, given != derived {
                fail("durationDays", "must match the competition's time limit (\(derived) days) or be omitted")
            }
            return
        }
        if let days = draft.durationDays {
            if !DraftLimits.duration.contains(days) {
                fail("durationDays", "must be from 1 to 365 days")
            } else if let today = context.today, today.adding(days: days - 1) > LocalDate.supportedRange.upperBound {
                fail("durationDays", "would end after \(LocalDate.supportedRange.upperBound), the last date Surge supports")
            }
            if kind == .chore { fail("durationDays", "a chore is open-ended; omit durationDays") }
        } else if ![.habit, .chore, .weekly].contains(kind) && !(kind == .curated && isContent) {
            fail("durationDays", "is required (1 to 365 days) for a \(kind.rawValue)")
        }
    }

    // MARK: Tasks

    mutating func checkTasks() {
        if kind == .chore {
            if draft.tasks != nil {
                fail("tasks", "a chore has exactly one checkbox task, made from its name, description and chore.points; omit tasks")
            }
            return
        }
        guard let tasks = draft.tasks else {
            if kind == .curated || kind == .weekly { fail("tasks", "is required: 1 to 20 tasks") }
            return
        }
        if !DraftLimits.tasks.contains(tasks.count) {
            fail("tasks", "must have 1 to \(DraftLimits.tasks.upperBound) tasks")
        }
        var seen: [String: Int] = [:]
        for (index, task) in tasks.enumerated() {
            checkTask(task, at: "tasks[\(index)]")
            if let first = seen[task.taskID] {
                fail("tasks[\(index)].taskID", "duplicates tasks[\(first)].taskID (\(task.taskID))")
            } else {
                seen[task.taskID] = index
            }
        }
    }

    static func isValidTaskID(_ id: String) -> Bool {
        (1...40).contains(id.count) && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    mutating func checkTask(_ task: TaskDraft, at path: String) {
        if !Self.isValidTaskID(task.taskID) {
            fail("\(path).taskID", "must be 1 to 40 characters of a-z, 0-9 and -")
        }
        let title = task.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if title.isEmpty {
            fail("\(path).title", "must not be empty")
        } else if title.count > DraftLimits.taskTitle.upperBound {
            fail("\(path).title", "must be at most \(DraftLimits.taskTitle.upperBound) characters")
        }
        if let details = task.details, details.count > DraftLimits.taskDetails {
            fail("\(path).details", "must be at most \(DraftLimits.taskDetails) characters")
        }
        switch task.kind {
        case .quantity:
            checkQuantity(task, at: path)
        case .checkbox, .photo:
            let what = task.kind == .checkbox ? "a checkbox" : "a photo"
            if task.target != nil { fail("\(path).target", "\(what) task has no target; use a quantity task") }
            if task.targetFromDailyGoal != nil { fail("\(path).targetFromDailyGoal", "\(what) task has no target; use a quantity task") }
            if task.unit != nil { fail("\(path).unit", "\(what) task has no unit; use a quantity task") }
        }
        if let points = task.points {
            if !DraftLimits.taskPoints.contains(points) {
                fail("\(path).points", "must be from 1 to \(DraftLimits.taskPoints.upperBound)")
            } else if rules.points.kind != .perTask {
                fail("\(path).points", "only counts with perTask points (rules.points.kind)")
            }
        }
        checkCadence(task.cadence ?? .daily, at: "\(path).cadence")
    }

    mutating func checkQuantity(_ task: TaskDraft, at path: String) {
        if let unit = task.unit {
            if let problem = Units.problem(with: unit) { fail("\(path).unit", problem) }
        } else {
            fail("\(path).unit", "is required for a quantity task (litres, push-ups, pages... or a custom unit)")
        }
        let personalised = kind == .weekly || (kind == .curated && isContent)
        if let fromGoal = task.targetFromDailyGoal {
            if !personalised {
                fail("\(path).targetFromDailyGoal", "is only for weekly challenges; give a target")
            } else if !(fromGoal > 0 && fromGoal <= 100) {
                fail("\(path).targetFromDailyGoal", "must be greater than 0 (and at most 100)")
            }
            if task.target != nil { fail("\(path).target", "give either target or targetFromDailyGoal, not both") }
        }
        if let target = task.target {
            if !(target > 0) {
                fail("\(path).target", "must be greater than 0")
            } else if target > DraftLimits.target {
                fail("\(path).target", "must be at most 1000000")
            }
        } else if task.targetFromDailyGoal == nil && kind != .competition {
            fail("\(path).target", kind == .weekly ? "is required (or targetFromDailyGoal)" : "is required for a quantity task and must be greater than 0")
        }
    }

    mutating func checkCadence(_ cadence: Cadence, at path: String) {
        switch cadence.kind {
        case .weekdays:
            if let weekdays = cadence.weekdays, !weekdays.isEmpty {
                if Set(weekdays).count != weekdays.count { fail("\(path).weekdays", "must not repeat a weekday") }
            } else {
                fail("\(path).weekdays", "must list at least one weekday")
            }
        default:
            if cadence.weekdays != nil { fail("\(path).weekdays", "is only for the weekdays cadence") }
        }
        if cadence.kind == .timesPerWeek {
            if let times = cadence.timesPerWeek {
                if !DraftLimits.timesPerWeek.contains(times) { fail("\(path).timesPerWeek", "must be from 1 to 7") }
            } else {
                fail("\(path).timesPerWeek", "is required for the timesPerWeek cadence (1 to 7)")
            }
        } else if cadence.timesPerWeek != nil {
            fail("\(path).timesPerWeek", "is only for the timesPerWeek cadence")
        }
        if let days = duration {
            if (cadence.kind == .weekly || cadence.kind == .timesPerWeek) && days < 7 {
                fail("\(path).kind", "a \(cadence.kind.rawValue) cadence needs durationDays of at least 7 (or an open-ended definition)")
            } else if cadence.kind == .monthly && days < 28 {
                fail("\(path).kind", "a monthly cadence needs durationDays of at least 28 (or an open-ended definition)")
            }
        }
    }

    // MARK: Rules

    mutating func checkFailure() {
        let failure = rules.failure
        let path = "rules.failure"
        if (kind == .habit || kind == .chore) && failure.mode != .none {
            fail("\(path).mode", "a \(kind.rawValue) never fails; use none")
        } else if duration == nil && failure.mode != .none {
            fail("\(path).mode", "an open-ended definition cannot fail; use none or give durationDays")
        }
        if failure.mode == .tolerant {
            if let allowed = failure.allowedMissedDays {
                if allowed < 1 {
                    fail("\(path).allowedMissedDays", "must be at least 1")
                } else if let days = duration, allowed >= days {
                    fail("\(path).allowedMissedDays", "must be less than durationDays (\(days))")
                }
            } else {
                fail("\(path).allowedMissedDays", "is required for the tolerant mode")
            }
        } else if failure.allowedMissedDays != nil {
            fail("\(path).allowedMissedDays", "is only for the tolerant mode")
        }
        if !DraftLimits.graceMinutes.contains(rules.checkInGraceMinutes) {
            fail("rules.checkInGraceMinutes", "must be from 0 to 2880 (two days)")
        }
    }

    mutating func checkStreak() {
        let streak = rules.streak
        if !DraftLimits.freezesPerMonth.contains(streak.freezesPerMonth) {
            fail("rules.streak.freezesPerMonth", "must be from 0 to 4")
        }
        if streak.activityKeepsWeeklyStreak && streak.period != .week {
            fail("rules.streak.activityKeepsWeeklyStreak", "is only for weekly streaks (period week)")
        }
        if let days = streak.weeklyGoalDays {
            if streak.period != .week {
                fail("rules.streak.weeklyGoalDays", "is only for weekly streaks (period week)")
            } else if !DraftLimits.weeklyGoalDays.contains(days) {
                fail("rules.streak.weeklyGoalDays", "must be from 1 to 7 days")
            }
        }
    }

    mutating func checkPause() {
        guard let pause = rules.pause else { return }
        let path = "rules.pause"
        switch (kind, pause.mode) {
        case (.chore, .pausesStreak), (.chore, .remindersOnly):
            fail("\(path).mode", "a chore is not paused; use notAllowed")
        case (.competition, .pausesStreak):
            fail("\(path).mode", "a competition's time limit does not move: use remindersOnly (a pause silences reminders) or notAllowed")
        default:
            break
        }
        let limits: [(String, Int?, ClosedRange<Int>)] = [
            ("maxDaysPerPause", pause.maxDaysPerPause, DraftLimits.daysPerPause),
            ("pausesPerMonth", pause.pausesPerMonth, DraftLimits.pausesPerMonth),
            ("pausesPerAttempt", pause.pausesPerAttempt, DraftLimits.pausesPerAttempt),
            ("skipDaysPerMonth", pause.skipDaysPerMonth, DraftLimits.skipDaysPerMonth),
        ]
        for (name, value, range) in limits {
            guard let value else { continue }
            if pause.mode == .notAllowed {
                fail("\(path).\(name)", "is only for rules that allow pauses")
            } else if name == "skipDaysPerMonth" && pause.mode != .pausesStreak {
                fail("\(path).\(name)", "is only for the pausesStreak mode")
            } else if !range.contains(value) {
                fail("\(path).\(name)", "must be from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        if let weekdays = pause.restWeekdays {
            if pause.mode != .pausesStreak {
                fail("\(path).restWeekdays", "is only for the pausesStreak mode")
            } else if Set(weekdays).count != weekdays.count {
                fail("\(path).restWeekdays", "must not repeat a weekday")
            } else if weekdays.count > DraftLimits.restWeekdays {
                fail("\(path).restWeekdays", "must leave at least one weekday that counts")
            }
        }
    }

    mutating func checkPoints() {
        let points = rules.points
        let path = "rules.points"
        switch points.kind {
        case .none:
            if points.pointsPerTask != nil { fail("\(path).pointsPerTask", "is only for perTask points") }
            if points.series != nil { fail("\(path).series", "is only for series points") }
        case .perTask:
            if let perTask = points.pointsPerTask, !DraftLimits.taskPoints.contains(perTask) {
                fail("\(path).pointsPerTask", "must be from 1 to \(DraftLimits.taskPoints.upperBound)")
            }
            if points.series != nil { fail("\(path).series", "is only for series points") }
        case .series:
            if points.pointsPerTask != nil { fail("\(path).pointsPerTask", "is only for perTask points") }
            if let series = points.series {
                checkSeries(series, at: "\(path).series")
            } else {
                fail("\(path).series", "is required for series points")
            }
            if !draft.resolvedTasks.contains(where: { $0.kind == .quantity }) {
                fail("\(path).kind", "series points count logged repetitions: the definition needs a quantity task")
            }
        }
        for (name, value) in [("weeklyGoalBonus", points.weeklyGoalBonus), ("completionBonus", points.completionBonus)] {
            if let value, !DraftLimits.bonus.contains(value) { fail("\(path).\(name)", "must be from 0 to \(DraftLimits.bonus.upperBound)") }
        }
    }

    mutating func checkSeries(_ series: SeriesFormula, at path: String) {
        let factors = [
            ("basePoints", series.basePoints, DraftLimits.seriesBasePoints), ("repMultiplier", series.repMultiplier, DraftLimits.seriesMultipliers),
            ("seriesMultiplier", series.seriesMultiplier, DraftLimits.seriesMultipliers),
        ]
        for (name, value, limit) in factors where !(value > 0 && value <= limit) {
            fail("\(path).\(name)", "must be greater than 0 (and at most \(Int(limit)))")
        }
        if series.streakMultipliers.isEmpty {
            fail("\(path).streakMultipliers", "must list at least one multiplier, from streak 0")
        }
        for (index, step) in series.streakMultipliers.enumerated() {
            let at = "\(path).streakMultipliers[\(index)]"
            if index == 0 && step.fromStreak != 0 { fail("\(at).fromStreak", "must be 0: the first multiplier applies from the start") }
            if index > 0 && step.fromStreak <= series.streakMultipliers[index - 1].fromStreak {
                fail("\(at).fromStreak", "must be greater than streakMultipliers[\(index - 1)].fromStreak")
            }
            if !(step.multiplier >= 1 && step.multiplier <= DraftLimits.seriesMultipliers) {
                fail("\(at).multiplier", "must be at least 1 (and at most \(Int(DraftLimits.seriesMultipliers)))")
            }
        }
        if series.capBands.isEmpty {
            fail("\(path).capBands", "must list at least one band, from level 1")
        }
        for (index, band) in series.capBands.enumerated() {
            let at = "\(path).capBands[\(index)]"
            if index == 0 && band.fromLevel != 1 { fail("\(at).fromLevel", "must be 1: the first band applies from level 1") }
            if index > 0 && band.fromLevel <= series.capBands[index - 1].fromLevel {
                fail("\(at).fromLevel", "must be greater than capBands[\(index - 1)].fromLevel")
            }
            if !(band.multiplierOfDailyGoal > 1 && band.multiplierOfDailyGoal <= 100) {
                fail("\(at).multiplierOfDailyGoal", "must be greater than 1 (and at most 100)")
            }
        }
        for (index, threshold) in series.levelThresholds.enumerated() {
            if threshold <= 0 {
                fail("\(path).levelThresholds[\(index)]", "must be greater than 0")
            } else if index > 0 && threshold <= series.levelThresholds[index - 1] {
                fail("\(path).levelThresholds[\(index)]", "must be greater than levelThresholds[\(index - 1)]")
            }
        }
    }

    // MARK: Kind details

    mutating func checkKindDetails() {
        if kind == .chore { checkChore() } else if draft.chore != nil { fail("chore", "is only for chores") }
        if kind == .habit { checkHabit() } else if draft.habit != nil { fail("habit", "is only for habits") }
        if kind == .competition { checkCompetition() } else if draft.competition != nil { fail("competition", "is only for competitions") }
    }

    mutating func checkChore() {
        guard let chore = draft.chore else {
            fail("chore", "is required for a chore (firstDueOn and recurrence)")
            return
        }
        if !chore.firstDueOn.isSupported {
            fail("chore.firstDueOn", LocalDate.unsupportedMessage(chore.firstDueOn.description))
        }
        if let points = chore.points, !DraftLimits.chorePoints.contains(points) {
            fail("chore.points", "must be from 1 to \(DraftLimits.chorePoints.upperBound)")
        }
        if let lead = chore.reminderLeadMinutes {
            if !DraftLimits.choreReminderLeadMinutes.contains(lead) {
                fail("chore.reminderLeadMinutes", "must be from 0 to \(DraftLimits.choreReminderLeadMinutes.upperBound)")
            } else if chore.dueTime == nil {
                fail("chore.reminderLeadMinutes", "is only for a chore with a dueTime")
            }
        }
        if let assignee = chore.assigneeID, context.checksMembership, draft.groupID != nil, !(context.groupMembers?.contains(assignee) ?? false) {
            fail("chore.assigneeID", "is not a member of the household")
        }
        let recurrence = chore.recurrence
        let path = "chore.recurrence"
        if recurrence.kind == .weekly {
            if let weekdays = recurrence.weekdays, !weekdays.isEmpty {
                if Set(weekdays).count != weekdays.count { fail("\(path).weekdays", "must not repeat a weekday") }
            } else {
                fail("\(path).weekdays", "must list at least one weekday for a weekly chore")
            }
        } else if recurrence.weekdays != nil {
            fail("\(path).weekdays", "is only for weekly recurrence")
        }
        if recurrence.kind == .monthly {
            if let day = recurrence.dayOfMonth, !DraftLimits.dayOfMonth.contains(day) {
                fail("\(path).dayOfMonth", "must be from 1 to 31 (clamped to short months)")
            }
        } else if recurrence.dayOfMonth != nil {
            fail("\(path).dayOfMonth", "is only for monthly recurrence")
        }
    }

    mutating func checkHabit() {
        guard let habit = draft.habit else { return }
        if let colour = habit.colour, !Self.isColour(colour) {
            fail("habit.colour", "must be a colour as #RRGGBB")
        }
        if let priority = habit.priority, !DraftLimits.priority.contains(priority) {
            fail("habit.priority", "must be from 1 to 5")
        }
        if let notes = habit.notes, notes.count > DraftLimits.habitNotes {
            fail("habit.notes", "must be at most \(DraftLimits.habitNotes) characters")
        }
    }

    static func isColour(_ text: String) -> Bool {
        text.count == 7 && text.hasPrefix("#") && text.dropFirst().allSatisfy(\.isHexDigit)
    }

    mutating func checkCompetition() {
        guard let competition = draft.competition else {
            fail("competition", "is required for a competition (startsAt, endsAt, timeZone, unit)")
            return
        }
        let path = "competition"
        if competition.startsAt >= competition.endsAt {
            fail("\(path).endsAt", "must be after startsAt")
        } else if competition.endsAt.timeIntervalSince(competition.startsAt) > CompetitionWindow.maximumSeconds {
            fail("\(path).endsAt", "must be at most 366 days after startsAt")
        }
        // Each participant is judged in their own zone, so the window must be on supported dates in every zone.
        let everywhere = LocalCalendar.supportedEverywhere
        if competition.startsAt < everywhere.lowerBound {
            fail("\(path).startsAt", "must be no earlier than \(Timestamp.format(everywhere.lowerBound)), when 1970-01-01 has begun in every time zone")
        }
        if competition.endsAt > everywhere.upperBound {
            fail("\(path).endsAt", "must be no later than \(Timestamp.format(everywhere.upperBound)), when 2200-12-31 ends in the easternmost time zone")
        }
        if !IANATimeZone.isValid(competition.timeZone) {
            fail("\(path).timeZone", "must be an IANA time zone such as Europe/Rome")
        }
        if let problem = Units.problem(with: competition.unit) {
            fail("\(path).unit", problem)
            return
        }
        let unit = Units.canonical(competition.unit)
        let quantities = draft.resolvedTasks.enumerated().filter { $0.element.kind == .quantity }
        if quantities.count != 1 {
            fail("tasks", "a competition has exactly one quantity task, in competition.unit (\(unit)); it has \(quantities.count)")
        } else if let (index, task) = quantities.first, let taskUnit = task.unit, taskUnit != unit {
            fail("tasks[\(index)].unit", "must be the competition's unit (\(unit))")
        }
    }

    // MARK: Badges of the challenge's own

    /// As the badge catalogue checks its own badges (`surge-badges`), with the rule kinds that can be about one challenge.
    mutating func checkBadges() {
        guard let badges = draft.badges else { return }
        if badges.count > ChallengeBadge.maximumCount { fail("badges", "must list at most \(ChallengeBadge.maximumCount) badges") }
        var seen: Set<String> = []
        for (index, badge) in badges.enumerated() {
            let path = "badges[\(index)]"
            if badge.id.range(of: ChallengeBadge.idPattern, options: .regularExpression) == nil {
                fail("\(path).id", "must be lowercase letters, digits and dashes (at most 40), starting with a letter or digit")
            } else if !seen.insert(badge.id).inserted {
                fail("\(path).id", "badge \(badge.id) is defined twice")
            }
            let title = badge.title.trimmingCharacters(in: .whitespacesAndNewlines)
            if title.isEmpty || title.count > ChallengeBadge.titleLength {
                fail("\(path).title", "must be 1 to \(ChallengeBadge.titleLength) characters")
            }
            if let description = badge.description, description.count > ChallengeBadge.descriptionLength {
                fail("\(path).description", "must be at most \(ChallengeBadge.descriptionLength) characters")
            }
            if let icon = badge.icon, icon.range(of: ChallengeBadge.idPattern, options: .regularExpression) == nil {
                fail("\(path).icon", "must be an icon name: lowercase letters, digits and dashes (at most 40)")
            }
            checkBadgeRule(badge.rule, at: "\(path).rule")
        }
    }

    mutating func checkBadgeRule(_ rule: ChallengeBadgeRule, at path: String) {
        switch rule.kind {
        case .streak:
            if let threshold = rule.threshold {
                if !ChallengeBadge.thresholds.contains(threshold) {
                    fail("\(path).threshold", "must be from 1 to \(ChallengeBadge.thresholds.upperBound)")
                }
            } else {
                fail("\(path).threshold", "is required for a streak badge: the streak that earns it")
            }
        case .challengeCompleted:
            if kind == .chore { fail("\(path).kind", "a chore is never completed: use streak") }
        case .firstPlace:
            if kind != .competition { fail("\(path).kind", "firstPlace is for competitions, whose board ranks the participants") }
        }
        if rule.kind != .streak && rule.threshold != nil { fail("\(path).threshold", "is only for streak badges") }
        if rule.kind != .firstPlace && rule.window != nil { fail("\(path).window", "is only for firstPlace badges") }
    }
}
