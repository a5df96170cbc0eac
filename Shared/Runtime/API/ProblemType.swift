import HTTPTypes

/// A kind of problem the public API answers: its documents carry `type` = `Problem.typeBase` + `slug`, so clients can
/// branch on it. Every slug the code uses is listed in `all` (a test reads the sources for them); each operation
/// declares the ones particular to it, and the OpenAPI document lists them with the ones every such operation can get.
public struct ProblemType: Sendable, Hashable {
    public var slug: String
    public var status: HTTPResponse.Status
    /// What it means and what a client does about it.
    public var meaning: String

    public init(_ slug: String, _ status: HTTPResponse.Status, _ meaning: String) {
        self.slug = slug
        self.status = status
        self.meaning = meaning
    }

    public var uri: String { Problem.typeBase + slug }
}

extension ProblemType {
    // MARK: Any operation

    public static let rateLimited = ProblemType(
        "rate-limited", .tooManyRequests, "Too many requests from this address or account; retry after `Retry-After` seconds.")
    public static let unavailable = ProblemType(
        "unavailable", .serviceUnavailable,
        "Something Surge depends on (its database, another service, a sign-in provider) cannot be reached; retry after `Retry-After` seconds.")
    public static let catchingUp = ProblemType(
        "catching-up", .serviceUnavailable,
        "This service has not yet seen something the request needs (an account or group created a moment ago); retry after `Retry-After` seconds.")
    public static let internalError = ProblemType("internal", .internalServerError, "A fault on Surge's side; it has been logged.")
    public static let methodNotAllowed = ProblemType("method-not-allowed", .methodNotAllowed, "The path exists, but not with this method.")
    public static let notFound = ProblemType("not-found", .notFound, "No such resource, or none the caller may see.")
    public static let unknownCursor = ProblemType(
        "unknown-cursor", .badRequest,
        "The `cursor` was not issued for this list (or this sort order), so the position it names does not exist: request the first "
            + "page again without a cursor.")

    // MARK: Authentication

    public static let unauthorized = ProblemType("unauthorized", .unauthorized, "No access token was sent.")
    public static let invalidToken = ProblemType(
        "invalid-token", .unauthorized, "The access token is malformed, expired or not Surge's: refresh it or sign in again.")
    public static let accountDeleted = ProblemType("account-deleted", .unauthorized, "The token's account was deleted.")
    public static let unauthenticatedCall = ProblemType(
        "unauthenticated-call", .unauthorized, "A service was called directly, not through the gateway (internal calls only).")

    // MARK: Request bodies and idempotency

    public static let malformedBody = ProblemType("malformed-body", .badRequest, "The body is not JSON, or could not be read.")
    public static let invalidCharacters = ProblemType(
        "invalid-characters", .badRequest, "A text field or query parameter contains NUL (U+0000); `errors` names each.")
    public static let unsupportedMediaType = ProblemType("unsupported-media-type", .unsupportedMediaType, "The body's Content-Type is not one the operation takes.")
    public static let payloadTooLarge = ProblemType("payload-too-large", .contentTooLarge, "The body is larger than the operation takes.")
    public static let validation = ProblemType(
        "validation", .unprocessableContent,
        "A field, query parameter or header breaks a rule (unknown fields included); `errors` names each with the rule broken.")
    public static let preconditionFailed = ProblemType(
        "precondition-failed", .preconditionFailed,
        "`If-Match` names none of the resource's current entity tags: it changed since it was read (on another device, say). GET it "
            + "again, apply the change to what it is now, and send it with the new `ETag`.")
    public static let idempotencyKeyReused = ProblemType(
        "idempotency-key-reused", .conflict,
        "This `Idempotency-Key` is bound to a different request (another method, path or body): use a new key for a new request.")
    public static let idempotencyKeyInProgress = ProblemType(
        "idempotency-key-in-progress", .conflict, "A request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds.")
    public static let forbidden = ProblemType("forbidden", .forbidden, "The caller may not do this.")
    public static let confirmationRequired = ProblemType(
        "confirmation-required", .unprocessableContent, "Deleting for good needs an explicit confirmation.")

    // MARK: Identity

    public static let emailTaken = ProblemType("email-taken", .conflict, "An account with this e-mail exists: sign in instead.")
    public static let accountExists = ProblemType(
        "account-exists", .conflict, "A password account has this e-mail: sign in with e-mail and password instead.")
    public static let credentialsExist = ProblemType("credentials-exist", .conflict, "The account already has credentials; only a guest attaches them.")
    public static let invalidCredentials = ProblemType("invalid-credentials", .unauthorized, "The e-mail or the password is wrong.")
    public static let signInThrottled = ProblemType(
        "sign-in-throttled", .tooManyRequests, "Too many failed sign-ins from this address; retry after `Retry-After` seconds.")
    public static let invalidRefreshToken = ProblemType(
        "invalid-refresh-token", .unauthorized, "The refresh token is unknown, expired or signed out: sign in again.")
    public static let refreshTokenReused = ProblemType(
        "refresh-token-reused", .unauthorized, "The refresh token was already used; every session of its family was signed out.")
    public static let providerNotEnabled = ProblemType(
        "provider-not-enabled", .forbidden, "This server does not accept sign-in with that provider (it is not configured here).")
    public static let invalidIDToken = ProblemType(
        "invalid-id-token", .unauthorized, "The provider's ID token is malformed, expired, wrongly signed or meant for another app.")
    public static let trainingPlanNotFound = ProblemType("training-plan-not-found", .notFound, "No training plan yet: onboarding has not saved one.")
    public static let alreadyFriends = ProblemType("already-friends", .conflict, "You are already friends.")
    public static let friendRequestExists = ProblemType(
        "friend-request-exists", .conflict, "A friend request between the two of you is pending; answer or cancel it.")
    public static let ownerOnly = ProblemType("owner-only", .forbidden, "Only the group's owner may do this.")
    public static let inviteExpired = ProblemType("invite-expired", .gone, "The invite has expired; ask for a new one.")
    public static let cannotRemoveSelf = ProblemType("cannot-remove-self", .conflict, "The owner cannot remove themselves; leave the group instead.")
    public static let invalidLinkToken = ProblemType(
        "invalid-link-token", .notFound,
        "The mailed link's token is unknown, already used or expired (one answer for all three): ask for a new mail.")
    public static let tooManyMailRequests = ProblemType(
        "too-many-mail-requests", .tooManyRequests, "Too many account mails asked for from this address; retry after `Retry-After` seconds.")

    // MARK: Challenges

    public static let notInvitable = ProblemType("not-invitable", .conflict, "This kind of challenge takes no invitations.")

    // MARK: Progress

    public static let alreadyStarted = ProblemType("already-started", .conflict, "You already have an active attempt at this challenge.")
    public static let attemptCompleted = ProblemType(
        "attempt-completed", .conflict, "A completed attempt is archived; start the challenge again instead.")
    public static let attemptNotActive = ProblemType(
        "attempt-not-active", .conflict, "The attempt has ended (failed, completed or abandoned); restart it to check in again.")
    public static let chore = ProblemType("chore", .conflict, "Household chores are completed occurrence by occurrence, not started.")
    public static let competitionEnded = ProblemType("competition-ended", .conflict, "The competition has ended.")
    public static let beyondSupportedDates = ProblemType(
        "beyond-supported-dates", .unprocessableContent, "The attempt would end after the last date Surge supports (2200-12-31).")
    public static let alreadyRemoved = ProblemType("already-removed", .conflict, "That logged amount was already removed.")
    public static let choreAlreadyCompleted = ProblemType("chore-already-completed", .conflict, "This chore occurrence was already completed.")
    public static let outsideCompetition = ProblemType(
        "outside-competition", .unprocessableContent, "The check-in falls outside the competition's time limit.")
    public static let checkInWindowClosed = ProblemType(
        "check-in-window-closed", .unprocessableContent, "Too late for that day: its check-in window has closed (`detail` says when).")
    public static let checkInInFuture = ProblemType("check-in-in-future", .unprocessableContent, "The check-in is for a day that has not begun.")
    public static let checkInBeforeStart = ProblemType("check-in-before-start", .unprocessableContent, "The check-in is for a day before the attempt began.")
    public static let checkInAfterEnd = ProblemType("check-in-after-end", .unprocessableContent, "The check-in is for a day after the attempt's last day.")
    public static let dayOff = ProblemType(
        "day-off", .conflict, "The check-in is for a day off (a pause, a vacation, a rest weekday or a skip day): resume the attempt to check in.")
    public static let pauseNotAllowed = ProblemType(
        "pause-not-allowed", .unprocessableContent, "The challenge's rules (`rules.pause`) allow no time off of this kind; `detail` names the rule.")
    public static let pauseTooLate = ProblemType(
        "pause-too-late", .unprocessableContent,
        "Time off may start after the fact only while the day's check-in window is open, never on a day already judged (`detail` says when it closed).")
    public static let pauseOverlaps = ProblemType("pause-overlaps", .conflict, "The days asked for overlap a pause or skip day the attempt already has.")
    public static let pauseTooLong = ProblemType(
        "pause-too-long", .unprocessableContent, "More days than the rules allow in one pause (`rules.pause.maxDaysPerPause`).")
    public static let pauseLimitReached = ProblemType(
        "pause-limit-reached", .unprocessableContent,
        "The rules' budget is used up (`rules.pause.pausesPerMonth`, `pausesPerAttempt` or `skipDaysPerMonth`); `detail` names which.")
    public static let notPaused = ProblemType("not-paused", .conflict, "The attempt has no pause in progress or to come.")


    // MARK: The event stream

    public static let tooManyStreams = ProblemType(
        "too-many-streams", .tooManyRequests, "The account already has as many open streams on this server as it may; close one first.")
    public static let invalidStreamTicket = ProblemType(
        "invalid-stream-ticket", .unauthorized, "The stream ticket is unknown, used or expired: ask for a new one (they live 60 seconds, for one stream).")

    // MARK: Notifications

    public static let webhookTargetRefused = ProblemType(
        "webhook-target-refused", .unprocessableContent,
        "The webhook URL is not https, or its host resolves to a loopback, private, link-local or other non-public address.")
    public static let webhookLimitReached = ProblemType(
        "webhook-limit-reached", .conflict, "The account has as many webhook subscriptions as it may; delete one first.")
    public static let invalidWebhookSignature = ProblemType(
        "invalid-webhook-signature", .unauthorized,
        "The webhook message is unsigned, not signed with the shared secret, or its timestamp is more than 5 minutes from now.")
    public static let clockBackwards = ProblemType(
        "clock-backwards", .conflict,
        "Development and tests only, never through the gateway: the simulated clock moves forward only (`surge-admin clock`).")

    /// Every problem type, in the order the document lists them.
    public static let all: [ProblemType] = [
        rateLimited, unavailable, catchingUp, internalError, methodNotAllowed, notFound, unknownCursor,
        unauthorized, invalidToken, accountDeleted, unauthenticatedCall,
        malformedBody, invalidCharacters, unsupportedMediaType, payloadTooLarge, validation, preconditionFailed, idempotencyKeyReused, idempotencyKeyInProgress,
        forbidden, confirmationRequired,
        emailTaken, accountExists, credentialsExist, invalidCredentials, signInThrottled, invalidRefreshToken, refreshTokenReused,
        invalidIDToken, providerNotEnabled, trainingPlanNotFound, alreadyFriends, friendRequestExists, ownerOnly, inviteExpired, cannotRemoveSelf,
        invalidLinkToken, tooManyMailRequests,
        notInvitable,
        alreadyStarted, attemptCompleted, attemptNotActive, chore, competitionEnded, beyondSupportedDates, alreadyRemoved, choreAlreadyCompleted,
        outsideCompetition, checkInWindowClosed, checkInInFuture, checkInBeforeStart, checkInAfterEnd, dayOff, pauseNotAllowed, pauseTooLate,
        pauseOverlaps, pauseTooLong, pauseLimitReached, notPaused,
        tooManyStreams, invalidStreamTicket,
        webhookTargetRefused, webhookLimitReached, invalidWebhookSignature,
        clockBackwards,
    ]

    /// What any operation may answer, given how it is declared.
    static func common(to operation: APIOperation) -> [ProblemType] {
        var types: [ProblemType] = [.rateLimited, .unavailable]
        // Identity and the gateway own what they answer from; the other services read projections of others' events.
        if operation.service != .identity && operation.service != .gateway { types.append(.catchingUp) }
        if operation.access == .authenticated { types += [.unauthorized, .invalidToken, .accountDeleted] }
        // Anyone not proven an admin gets the 404 of an unknown route, whatever is wrong with their token.
        if operation.access == .admin { types.append(.notFound) }
        if !operation.pathParameters.isEmpty { types.append(.notFound) }
        if operation.query.contains(where: { $0.name == "cursor" }) { types.append(.unknownCursor) }
        if operation.requestType != nil || !operation.query.isEmpty { types.append(.validation) }
        if operation.requestType != nil || !operation.query.isEmpty { types.append(.invalidCharacters) }
        if operation.requestType != nil { types += [.malformedBody, .unsupportedMediaType, .payloadTooLarge] }
        if operation.isUpload { types += [.validation, .unsupportedMediaType, .payloadTooLarge] }
        if operation.idempotent { types += [.validation, .idempotencyKeyReused, .idempotencyKeyInProgress] }
        if operation.acceptsIfMatch { types.append(.preconditionFailed) }
        return types
    }
}
