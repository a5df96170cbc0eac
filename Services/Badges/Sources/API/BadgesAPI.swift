import SurgeContracts
import SurgeRuntime

/// The public operations the badge service answers.
enum BadgesAPI {
    static let catalogue = APIOperation(
        .get, "/v1/badges", id: "listBadges", service: .badges,
        summary: "The badge catalogue, each level with its rarity (the share of users holding it); secret badges stay hidden until earned. "
            + "With challengeID: that challenge's own badges instead, rarity among those who joined it.",
        query: [
            .init(
                "challengeID",
                "A challenge whose own badges to list: one the caller joined, or may see (curated, public, their own, their "
                    + "group's). Any other is 404, as one that does not exist.",
                schema: .string(format: "uuid"))
        ],
        response: CatalogueView.self, errors: [.notFound])
    static let mine = APIOperation(
        .get, "/v1/me/badges", id: "getMyBadges", service: .badges,
        summary: "The caller's achievements: badges earned (with level, period and date) and those still locked, with progress (\"7 of 10\"): "
            + "the catalogue's and the own badges of the challenges the caller joined.",
        response: MyBadgesView.self)
    static let users = APIOperation(
        .get, "/v1/users/{userID}/badges", id: "getUserBadges", service: .badges,
        summary: "Another user's earned badges, for their friends and the members of their groups (404 otherwise).",
        response: UserBadgesView.self)

    static let all = [catalogue, mine, users]
}
