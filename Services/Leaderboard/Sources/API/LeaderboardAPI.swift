import SurgeContracts
import SurgeRuntime

/// The public operations the leaderboard answers.
enum LeaderboardAPI {
    static let windowQuery = APIOperation.QueryParameter(
        "window",
        "`week` (the current one, the default), `month`, `all-time`, or a past window by its key: `2026-W47` (ISO week) or `2026-11`, "
            + "from 1970 to 2200. A window that has not begun is 404.",
        schema: JSONSchema.string().refined(.init(
            pattern: "^(week|month|all-time|(19[7-9][0-9]|2[01][0-9]{2}|2200)-(W(0[1-9]|[1-4][0-9]|5[0-3])|0[1-9]|1[0-2]))$", example: "week")))
    static let historyQuery = APIOperation.QueryParameter(
        "kind", "Past weeks (the default) or past months.", schema: JSONSchema.string().refined(.init(pattern: "^(week|month)$", example: "week")))

    static let list = APIOperation(
        .get, "/v1/leaderboards", id: "listLeaderboards", service: .leaderboard,
        summary: "The boards the caller can see: each group they belong to and each challenge they take part in, with this week's leaders and their own place.",
        response: BoardListView.self)

    static let challengeBoard = APIOperation(
        .get, "/v1/leaderboards/challenges/{challengeID}", id: "getChallengeLeaderboard", service: .leaderboard,
        summary: "A challenge's standings (a competition's by total quantity in its unit), best first, ties sharing a rank and ordered by name.",
        query: [windowQuery] + APIOperation.QueryParameter.pagination, response: BoardPageView.self)
    static let challengeMe = APIOperation(
        .get, "/v1/leaderboards/challenges/{challengeID}/me", id: "getMyChallengeStanding", service: .leaderboard,
        summary: "The caller's rank, score and percentile on a challenge's board.", query: [windowQuery], response: MyStandingView.self)
    static let challengeAround = APIOperation(
        .get, "/v1/leaderboards/challenges/{challengeID}/around-me", id: "getChallengeLeaderboardAroundMe", service: .leaderboard,
        summary: "The page of a challenge's board around the caller.", query: [windowQuery] + [APIOperation.QueryParameter.pagination[0]],
        response: BoardPageView.self)
    static let challengeFriends = APIOperation(
        .get, "/v1/leaderboards/challenges/{challengeID}/friends", id: "getChallengeFriendsLeaderboard", service: .leaderboard,
        summary: "The caller and their friends on a challenge, ranked among themselves (1 to n), not by their global ranks.",
        query: [windowQuery], response: BoardPageView.self)
    static let challengeHistory = APIOperation(
        .get, "/v1/leaderboards/challenges/{challengeID}/history", id: "getChallengeLeaderboardHistory", service: .leaderboard,
        summary: "Past weeks or months of a challenge's board, newest first, with their winners.",
        query: [historyQuery] + APIOperation.QueryParameter.pagination, response: BoardHistoryView.self)

    static let groupBoard = APIOperation(
        .get, "/v1/leaderboards/groups/{groupID}", id: "getGroupLeaderboard", service: .leaderboard,
        summary: "A group's or household's standings: every member, by points earned in anything of the group; weeks run Monday to Sunday in the group's zone.",
        query: [windowQuery] + APIOperation.QueryParameter.pagination, response: BoardPageView.self)
    static let groupMe = APIOperation(
        .get, "/v1/leaderboards/groups/{groupID}/me", id: "getMyGroupStanding", service: .leaderboard,
        summary: "The caller's rank, score and percentile on a group's board.", query: [windowQuery], response: MyStandingView.self)
    static let groupAround = APIOperation(
        .get, "/v1/leaderboards/groups/{groupID}/around-me", id: "getGroupLeaderboardAroundMe", service: .leaderboard,
        summary: "The page of a group's board around the caller.", query: [windowQuery] + [APIOperation.QueryParameter.pagination[0]],
        response: BoardPageView.self)
    static let groupHistory = APIOperation(
        .get, "/v1/leaderboards/groups/{groupID}/history", id: "getGroupLeaderboardHistory", service: .leaderboard,
        summary: "Past weeks or months of a group's board, newest first, with their winners (last week's winner).",
        query: [historyQuery] + APIOperation.QueryParameter.pagination, response: BoardHistoryView.self)

    static let all = [
        list, challengeBoard, challengeMe, challengeAround, challengeFriends, challengeHistory, groupBoard, groupMe, groupAround, groupHistory,
    ]
}
