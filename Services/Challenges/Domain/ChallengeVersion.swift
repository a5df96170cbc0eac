import Foundation
import SurgeCalendar
import SurgeContracts

/// One version of a definition as challenges keeps it: what a draft builds, what `challenge_versions.definition`
/// stores (and a user's erasure edits there by key), what rules are described from and lists summarise.
///
/// Its JSON is field for field that of the published `ChallengeDefinition`, and must stay so: the stored versions
/// and the public API (whose `definition` is documented as that schema) read the same bytes. It is a type of its own
/// so that the event contract and what challenges stores change apart; the service turns it into the event's
/// definition where it publishes one. Tasks, rules and details are the contract's types: they are the vocabulary
/// progress judges by, shared on purpose.
public struct ChallengeVersion: Codable, Sendable, Equatable {
    public var challengeID: UUID
    public var version: Int
    /// The first local date this version judges; absent on version 1, which judges from the start.
    public var effectiveFrom: LocalDate?
    public var kind: ChallengeKind
    public var name: String
    public var description: String
    public var category: String
    public var difficulty: Difficulty
    public var visibility: Visibility
    public var ownerID: UUID?
    public var groupID: UUID?
    /// Absent for open-ended habits, chores and weekly challenges.
    public var durationDays: Int?
    public var estimatedDailyMinutes: Int?
    public var tasks: [ChallengeTask]
    public var rules: ChallengeRules
    public var chore: ChoreDetails?
    public var habit: HabitDetails?
    public var competition: CompetitionDetails?
    /// Badges of the challenge's own, beside the badge catalogue's; absent when it names none.
    public var badges: [ChallengeBadge]?

    /// Curated challenges and competitions are joined from anywhere, and progress judges each participant's days in
    /// their own zone; the other definitions are judged in their owner's or group's zone.
    public var isJudgedInParticipantsZones: Bool { visibility == .curated || kind == .competition }

    /// The same content, ignoring the version number and effective date.
    public func hasSameContent(as other: ChallengeVersion) -> Bool {
        var mine = self
        mine.version = other.version
        mine.effectiveFrom = other.effectiveFrom
        return mine == other
    }
}
