import Foundation
import SurgeContracts

/// An edit: the fields that change, each replacing the current value whole (`tasks` replaces every task, `rules`
/// every rule part it names). The result is validated like a new definition and becomes the next version, in force
/// from the next local day (`VersionSchedule`). The kind never changes.
@dynamicMemberLookup
public struct ChallengePatch: Sendable, Equatable {
    public var name: String?
    public var fields = DraftFields()

    public subscript<Value>(dynamicMember field: WritableKeyPath<DraftFields, Value>) -> Value {
        get { fields[keyPath: field] }
        set { fields[keyPath: field] = newValue }
    }

    public var isEmpty: Bool { self == ChallengePatch() }

    /// Whether the edit touches who belongs: membership is then checked again.
    public var changesMembership: Bool { fields.groupID != nil || fields.chore != nil || fields.visibility != nil }

    /// `draft` with this edit applied. Rule parts the edit names replace the current ones; the others stay.
    public func applied(to draft: ChallengeDraft) -> ChallengeDraft {
        var draft = draft
        if let name { draft.name = name }
        draft.fields.apply(fields)
        return draft
    }
}

extension ChallengePatch: Codable {
    private enum CodingKeys: String, CodingKey { case name }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decodeIfPresent(String.self, forKey: .name), fields: try DraftFields(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try fields.encode(to: encoder)
    }
}

extension DraftFields {
    /// Each field `edit` names replaces this one; of the rules, each part it names.
    mutating func apply(_ edit: DraftFields) {
        if let description = edit.description { self.description = description }
        if let category = edit.category { self.category = category }
        if let difficulty = edit.difficulty { self.difficulty = difficulty }
        if let visibility = edit.visibility {
            self.visibility = visibility
            // JSON cannot say "no group" with an absent field: leaving group visibility leaves the group.
            if visibility != .group && edit.groupID == nil { groupID = nil }
        }
        if let groupID = edit.groupID { self.groupID = groupID }
        if let durationDays = edit.durationDays { self.durationDays = durationDays }
        if let minutes = edit.estimatedDailyMinutes { estimatedDailyMinutes = minutes }
        if let tasks = edit.tasks { self.tasks = tasks }
        if let rules = edit.rules {
            var merged = self.rules ?? RulesDraft()
            if let failure = rules.failure { merged.failure = failure }
            if let streak = rules.streak { merged.streak = streak }
            if let points = rules.points { merged.points = points }
            if let grace = rules.checkInGraceMinutes { merged.checkInGraceMinutes = grace }
            if let pause = rules.pause { merged.pause = pause }
            self.rules = merged
        }
        if let chore = edit.chore { self.chore = chore }
        if let habit = edit.habit { self.habit = habit }
        if let competition = edit.competition { self.competition = competition }
        if let badges = edit.badges { self.badges = badges }
    }
}
