import ChallengesDomain
import SurgeContracts
import SurgeRuntime

/// The public operations the challenges service answers.
enum ChallengesAPI {
    static let browseQuery: [APIOperation.QueryParameter] = [
        .init(
            "q", "Full-text search in name (strongest), description and category; web-search syntax (\"quoted phrases\", -exclusions).",
            schema: JSONSchema.string().refined(.init(maxLength: BrowseQuery.maxQueryLength, example: "push-ups"))),
        .init("kind", "Only this kind.", schema: .of(ChallengeKind.self)),
        .init("difficulty", "Only this difficulty.", schema: .of(Difficulty.self)),
        .init(
            "category", "Only this category.",
            schema: JSONSchema.string().refined(.init(maxLength: DraftLimits.category.upperBound, example: "fitness"))),
        .init("minDays", "Only definitions lasting at least this many days (open-ended ones are left out).", schema: .integer(in: 1...366)),
        .init("maxDays", "Only definitions lasting at most this many days (open-ended ones are left out).", schema: .integer(in: 1...366)),
        .init(
            "sort", "newest (the default without q), liked, trending (joins and likes in the last 7 days) or relevance (the default with q; without q it is newest).",
            schema: .of(BrowseSort.self)),
    ] + APIOperation.QueryParameter.pagination

    static let browse = APIOperation(
        .get, "/v1/challenges", id: "listChallenges", service: .challenges,
        summary: "Browse and search the challenges the caller may see: the curated library, public competitions, and their own, invited and household definitions.",
        query: browseQuery, response: Page<ChallengeSummary>.self)

    static let create = APIOperation(
        .post, "/v1/challenges", id: "createChallenge", service: .challenges,
        summary: "Create a competition, habit, household chore or weekly challenge (curated challenges come from the content library).",
        request: ChallengeDraft.self, status: .created, response: ChallengeDetail.self, problems: [.notFound])

    static let detail = APIOperation(
        .get, "/v1/challenges/{challengeID}", id: "getChallenge", service: .challenges,
        summary: "A definition as in force today: tasks, rules in words, failure conditions, estimated daily time, versions, likes.",
        response: ChallengeDetail.self)

    static let version = APIOperation(
        .get, "/v1/challenges/{challengeID}/versions/{version}", id: "getChallengeVersion", service: .challenges,
        summary: "One version of a definition, as it was (past days are judged by the version in force on them).",
        response: ChallengeDetail.self)

    static let update = APIOperation(
        .patch, "/v1/challenges/{challengeID}", id: "updateChallenge", service: .challenges,
        summary: "Edit a definition (owner; any household member for chores). Creates the next version, in force from the next local day (for competitions, the first day not yet begun anywhere).",
        request: ChallengePatch.self, response: ChallengeDetail.self, problems: [.forbidden])

    static let delete = APIOperation(
        .delete, "/v1/challenges/{challengeID}", id: "deleteChallenge", service: .challenges,
        summary: "Delete a definition with its whole history. Needs ?confirm=true; without it answers 422 confirmation-required.",
        query: [.init("confirm", "Must be true: deleting removes the history for good.", schema: JSONSchema.boolean.refined(.init(default: false)))],
        status: .noContent, problems: [.forbidden, .confirmationRequired])

    static let invite = APIOperation(
        .post, "/v1/challenges/{challengeID}/invitations", id: "inviteToChallenge", service: .challenges,
        summary: "Invite friends (accepted friendships) or every member of a group you belong to; one invitation event per invitee.",
        request: InvitationRequest.self, status: .created, response: InvitationResult.self, problems: [.forbidden, .notInvitable])

    static let like = APIOperation(
        .put, "/v1/challenges/{challengeID}/like", id: "likeChallenge", service: .challenges,
        summary: "Like a challenge (idempotent).", response: LikeState.self)

    static let unlike = APIOperation(
        .delete, "/v1/challenges/{challengeID}/like", id: "unlikeChallenge", service: .challenges,
        summary: "Take a like back (idempotent).", response: LikeState.self)

    static let mine = APIOperation(
        .get, "/v1/me/challenges", id: "listMyChallenges", service: .challenges,
        summary: "What the caller created or was invited to, newest first; filter by kind (e.g. kind=habit for my habits).",
        query: [.init("kind", "Only this kind.", schema: .of(ChallengeKind.self))]
            + APIOperation.QueryParameter.pagination,
        response: Page<ChallengeSummary>.self)

    static let chores = APIOperation(
        .get, "/v1/groups/{groupID}/chores", id: "listGroupChores", service: .challenges,
        summary: "A household's chores, newest first; for its members only.", query: APIOperation.QueryParameter.pagination,
        response: Page<ChallengeSummary>.self)

    static let all = [browse, create, detail, version, update, delete, invite, like, unlike, mine, chores]
}
