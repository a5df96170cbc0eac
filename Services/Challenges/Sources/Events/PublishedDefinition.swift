import ChallengesDomain
import SurgeContracts

extension ChallengeDefinition {
    /// A version as the events carry it (`ChallengePublished`, `ChallengeChanged`) and the public API shows it: the one
    /// place challenges' own `ChallengeVersion` becomes the contract's definition.
    init(_ version: ChallengeVersion) {
        self.init(
            challengeID: version.challengeID, version: version.version, effectiveFrom: version.effectiveFrom, kind: version.kind,
            name: version.name, description: version.description, category: version.category, difficulty: version.difficulty,
            visibility: version.visibility, ownerID: version.ownerID, groupID: version.groupID, durationDays: version.durationDays,
            estimatedDailyMinutes: version.estimatedDailyMinutes, tasks: version.tasks, rules: version.rules, chore: version.chore,
            habit: version.habit, competition: version.competition, badges: version.badges)
    }
}
