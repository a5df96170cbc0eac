import Foundation
import SurgeContracts

/// One version of a challenge as progress judges by it: its tasks and rules, and the facts around them that progress
/// decides by (its kind and length, a competition's window, who may join, a chore's schedule). Progress's own
/// projection of the published `ChallengeDefinition`, made where the service reads one; what only the catalogue shows
/// (description, category, difficulty, habit details, badges) is left out. Tasks and rules keep the contract's value
/// types: they are the vocabulary the rules are written in, the same on both sides.
public struct JudgingDefinition: Sendable, Equatable {
    public var challengeID: UUID
    public var version: Int
    /// The first local date this version judges; absent on version 1, which judges from the start.
    public var effectiveFrom: LocalDate?
    public var kind: ChallengeKind
    public var name: String
    public var visibility: Visibility
    public var ownerID: UUID?
    public var groupID: UUID?
    /// Absent for open-ended habits, chores and weekly challenges.
    public var durationDays: Int?
    public var tasks: [ChallengeTask]
    public var rules: ChallengeRules
    public var chore: ChoreDetails?
    public var competition: CompetitionDetails?

    public init(
        challengeID: UUID, version: Int, effectiveFrom: LocalDate?, kind: ChallengeKind, name: String, visibility: Visibility, ownerID: UUID?,
        groupID: UUID?, durationDays: Int?, tasks: [ChallengeTask], rules: ChallengeRules, chore: ChoreDetails? = nil,
        competition: CompetitionDetails? = nil
    ) {
        self.challengeID = challengeID
        self.version = version
        self.effectiveFrom = effectiveFrom
        self.kind = kind
        self.name = name
        self.visibility = visibility
        self.ownerID = ownerID
        self.groupID = groupID
        self.durationDays = durationDays
        self.tasks = tasks
        self.rules = rules
        self.chore = chore
        self.competition = competition
    }

    /// The pause rule in force: the definition's own, or its kind's default.
    public var pauseRule: PauseRule { rules.pause ?? .default(for: kind) }
}
