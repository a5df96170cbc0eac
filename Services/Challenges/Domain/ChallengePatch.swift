import Foundation
import SurgeContracts

/// An edit: the fields that change, each replacing the current value whole (`tasks` replaces every task, `rules`
/// every rule part it names). The result is validated like a new definition and becomes the next version, in force
/// from the next local day (`VersionSchedule`). The kind never changes.
public struct ChallengePatch: Codable, Sendable, Equatable {
    public var name: String?
    public var description: String?
    public var category: String?
    public var difficulty: Difficulty?
    public var visibility: Visibility?
    public var groupID: UUID?
    public var durationDays: Int?
    public var estimatedDailyMinutes: Int?
    public var tasks: [TaskDraft]?
    public var rules: RulesDraft?
    public var chore: ChoreDraft?
    public var habit: HabitDetails?
    public var competition: CompetitionDetails?
    /// Replaces the challenge's own badges (`[]` removes them).
    public var badges: [ChallengeBadge]?

    public var isEmpty: Bool { self == ChallengePatch() }

    /// Whether the edit touches who belongs: membership is then checked again.
    public var changesMembership: Bool { groupID != nil || chore != nil || visibility != nil }

    /// `draft` with this edit applied. Rule parts the edit names replace the current ones; the others stay.
    public func applied(to draft: ChallengeDraft) -> ChallengeDraft {
        var draft = draft
        if let name { draft.name = name }
        if let description { draft.description = description }
        if let category { draft.category = category }
        if let difficulty { draft.difficulty = difficulty }
        if let visibility {
            draft.visibility = visibility
            // JSON cannot say "no group" with an absent field: leaving group visibility leaves the group.
            if visibility != .group && groupID == nil { draft.groupID = nil }
        }
        if let groupID { draft.groupID = groupID }
        if let durationDays { draft.durationDays = durationDays }
        if let estimatedDailyMinutes { draft.estimatedDailyMinutes = estimatedDailyMinutes }
        if let tasks { draft.tasks = tasks }
        if let rules {
            var merged = draft.rules ?? RulesDraft()
            if let failure = rules.failure { merged.failure = failure }
            if let streak = rules.streak { merged.streak = streak }
            if let points = rules.points { merged.points = points }
            if let grace = rules.checkInGraceMinutes { merged.checkInGraceMinutes = grace }
            if let pause = rules.pause { merged.pause = pause }
            draft.rules = merged
        }
        if let chore { draft.chore = chore }
        if let habit { draft.habit = habit }
        if let competition { draft.competition = competition }
        if let badges { draft.badges = badges }
        return draft
    }
}
