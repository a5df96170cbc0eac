import ChallengesDomain
import Foundation
import Hummingbird
import SurgeContracts
import SurgeRuntime

// What the API answers. The detail and the summaries are rendered here from what reading and browsing return; a like
// and the outcome of inviting are answered as the use cases return them.

/// A definition as the detail view shows it (000 CL-02, CL-03, CL-06, CL-07): the version in force today (or the
/// one asked for), its history, its rules in plain words, and the social counters.
struct ChallengeDetail: ResponseCodable, Equatable {
    /// The version shown, in the shape the public API documents for it: the published events' `ChallengeDefinition`.
    var definition: ChallengeDefinition
    var latestVersion: Int
    var versions: [VersionSummary]
    /// The rules in one paragraph, generated from them ("Miss any task and the challenge restarts at day 1. ...").
    var ruleSummary: String
    /// What fails an attempt, one condition per line; empty when nothing can.
    var failureConditions: [String]
    var estimatedDailyMinutes: Int?
    var likes: Int
    var likedByMe: Bool
    /// The caller was invited to it.
    var invited: Bool
    /// The caller may edit and delete it.
    var canEdit: Bool
    var createdAt: Date
    var updatedAt: Date
}

extension ChallengeDetail {
    init(_ shown: ShownChallenge) {
        let challenge = shown.challenge
        self.init(
            definition: ChallengeDefinition(shown.version), latestVersion: challenge.latestVersion, versions: shown.history,
            ruleSummary: RuleDescription.summary(shown.version), failureConditions: RuleDescription.failureConditions(shown.version),
            estimatedDailyMinutes: shown.version.estimatedDailyMinutes, likes: challenge.likes, likedByMe: challenge.likedByMe,
            invited: challenge.isInvited, canEdit: AccessPolicy.canEdit(challenge.facts), createdAt: challenge.createdAt,
            updatedAt: challenge.updatedAt)
    }
}

/// A definition in a list: its latest version, without the task details.
struct ChallengeSummary: ResponseCodable, Equatable {
    var challengeID: UUID
    var kind: ChallengeKind
    var name: String
    var description: String
    var category: String
    var difficulty: Difficulty
    var visibility: Visibility
    var ownerID: UUID?
    var groupID: UUID?
    var durationDays: Int?
    var estimatedDailyMinutes: Int?
    var latestVersion: Int
    var taskCount: Int
    var likes: Int
    /// Joins and likes in the last seven days.
    var trendingScore: Int
    var createdAt: Date
    var chore: ChoreDetails?
    var habit: HabitDetails?
    var competition: CompetitionDetails?
    /// Search relevance (`ts_rank`), when searching.
    var relevance: Double?
}

extension ChallengeSummary {
    init(_ listed: ListedChallenge) {
        let latest = listed.latest
        self.init(
            challengeID: latest.challengeID, kind: latest.kind, name: latest.name, description: latest.description, category: latest.category,
            difficulty: latest.difficulty, visibility: latest.visibility, ownerID: latest.ownerID, groupID: latest.groupID,
            durationDays: latest.durationDays, estimatedDailyMinutes: latest.estimatedDailyMinutes, latestVersion: latest.version,
            taskCount: latest.tasks.count, likes: listed.likes, trendingScore: listed.trendingScore, createdAt: listed.createdAt,
            chore: latest.chore, habit: latest.habit, competition: latest.competition, relevance: listed.relevance)
    }

    static func page(_ listed: Page<ListedChallenge>) -> Page<ChallengeSummary> {
        Page(items: listed.items.map(ChallengeSummary.init), nextCursor: listed.nextCursor)
    }
}

struct LikeState: ResponseCodable, Equatable {
    var challengeID: UUID
    var likes: Int
    var likedByMe: Bool
}

struct InvitationResult: ResponseCodable, Equatable {
    /// The invitations sent now, one `ChallengeInvitationSent` each.
    var invitations: [Invitation]
    /// Invitees who had been invited before (or own the challenge): nothing was sent to them again.
    var alreadyInvited: [UUID]
}
