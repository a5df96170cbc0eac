import IdentityDomain
import SurgeContracts
import SurgeRuntime

/// The public operations identity answers.
enum IdentityAPI {
    // MARK: Sessions

    static let registerGuest = APIOperation(
        .post, "/v1/auth/guest", id: "registerGuest", service: .identity,
        summary: "Create a guest account with a display name only (offline-first apps); credentials can be attached later.",
        access: .anonymous, throttle: .credentials, request: GuestRequest.self, status: .created, response: SessionResponse.self)

    static let register = APIOperation(
        .post, "/v1/auth/register", id: "register", service: .identity,
        summary: "Create an account with e-mail and password. Each broken password rule is reported on `password`; a taken e-mail is 409 email-taken.",
        access: .anonymous, throttle: .credentials, request: RegisterRequest.self, status: .created, response: SessionResponse.self,
        problems: [.emailTaken])

    static let signIn = APIOperation(
        .post, "/v1/auth/sign-in", id: "signIn", service: .identity,
        summary: "Sign in with e-mail and password. Wrong e-mail or password: 401 invalid-credentials; after 5 failures from one address: 429 with Retry-After (1 minute, doubling up to 15); other addresses are not locked out, "
            + "and a device sending its deviceToken is not refused for failures from other addresses (docs/accounts.md, \"Sign-in throttling\").",
        access: .anonymous, throttle: .credentials, request: SignInRequest.self, response: SessionResponse.self,
        problems: [.invalidCredentials, .signInThrottled])

    static let socialSignIn = APIOperation(
        .post, "/v1/auth/social", id: "socialSignIn", service: .identity,
        summary: "Sign in with an Apple or Google ID token: a known identity signs in, a verified e-mail links to its social account, otherwise an account is created. A password account with that e-mail is 409 account-exists.",
        access: .anonymous, throttle: .credentials, request: SocialSignInRequest.self, response: SocialSessionResponse.self,
        problems: [.invalidIDToken, .providerNotEnabled, .accountExists])

    static let refresh = APIOperation(
        .post, "/v1/auth/refresh", id: "refreshSession", service: .identity,
        summary: "Exchange a refresh token for new tokens. Each refresh token works once; presenting a used one signs out its whole family (401 refresh-token-reused).",
        access: .anonymous, throttle: .credentials, request: RefreshTokenRequest.self, response: SessionResponse.self,
        problems: [.invalidRefreshToken, .refreshTokenReused, .accountDeleted])

    static let signOut = APIOperation(
        .post, "/v1/auth/sign-out", id: "signOut", service: .identity,
        summary: "Sign this device out: revokes the refresh token's family.",
        access: .anonymous, throttle: .credentials, request: RefreshTokenRequest.self, status: .noContent)

    // MARK: Recovery, verification, devices

    static let forgotPassword = APIOperation(
        .post, "/v1/auth/forgot-password", id: "forgotPassword", service: .identity,
        summary: "Ask for a password-reset link by e-mail. Always 202 with no body, whether or not an account has the address; "
            + "a verified address gets a link valid 30 minutes, an unverified one a verification link instead. At most 3 mails per "
            + "address an hour (more are answered alike and send nothing); 20 requests per client address an hour, then 429.",
        access: .anonymous, throttle: .credentials, request: ForgotPasswordRequest.self, status: .accepted,
        problems: [.tooManyMailRequests])

    static let resetPassword = APIOperation(
        .post, "/v1/auth/reset-password", id: "resetPassword", service: .identity,
        summary: "Set a new password with the mailed token. The token works once; every device is signed out (every refresh token "
            + "refused). An unknown, used or expired token is 404 invalid-link-token.",
        access: .anonymous, throttle: .credentials, request: ResetPasswordRequest.self, status: .noContent, problems: [.invalidLinkToken])

    static let verifyEmail = APIOperation(
        .post, "/v1/auth/verify-email", id: "verifyEmail", service: .identity,
        summary: "Verify an address with the mailed token: the account's address, or the new address of a change, which takes effect "
            + "now (the old address is told). An unknown, used or expired token is 404 invalid-link-token.",
        access: .anonymous, throttle: .credentials, request: VerifyEmailRequest.self, status: .noContent,
        problems: [.invalidLinkToken, .emailTaken])

    static let getEmail = APIOperation(
        .get, "/v1/me/email", id: "getEmail", service: .identity,
        summary: "The account's address, whether it is verified, and an address change waiting for verification.",
        response: EmailStatusResponse.self)

    static let changeEmail = APIOperation(
        .post, "/v1/me/email", id: "changeEmail", service: .identity,
        summary: "Change the address (with the current password). Nothing changes until the link mailed to the new address is "
            + "followed; the address stays the old one meanwhile.",
        request: ChangeEmailRequest.self, status: .accepted, response: EmailStatusResponse.self,
        problems: [.invalidCredentials, .signInThrottled, .emailTaken])

    static let changePassword = APIOperation(
        .post, "/v1/me/password", id: "changePassword", service: .identity,
        summary: "Change the password with the current one. Every device is signed out; this one gets new tokens.",
        request: ChangePasswordRequest.self, response: SessionResponse.self, problems: [.invalidCredentials, .signInThrottled])

    static let listSessions = APIOperation(
        .get, "/v1/me/sessions", id: "listSessions", service: .identity,
        summary: "The caller's signed-in devices, oldest first: name, when signed in and when last used. The session of the access token "
            + "that asks is marked `current` (none is when the token predates sessions being named).",
        response: DeviceSessionList.self)

    static let endSession = APIOperation(
        .delete, "/v1/me/sessions/{sessionID}", id: "endSession", service: .identity,
        summary: "Sign one device out: its refresh token is refused from now on, and its access tokens once the gateway has heard of it "
            + "(on a settled stack well under a second; docs/accounts.md, \"Ending a session ends its access tokens\").",
        status: .noContent)

    static let endOtherSessions = APIOperation(
        .post, "/v1/me/sessions/end-others", id: "endOtherSessions", service: .identity,
        summary: "Sign out every device but this one (named by its refresh token, 401 invalid-refresh-token if it is not a live one of yours).",
        request: EndOtherSessionsRequest.self, status: .noContent, problems: [.invalidRefreshToken])

    // MARK: Account

    static let me = APIOperation(
        .get, "/v1/me", id: "getMe", service: .identity, summary: "The caller's account.", response: AccountResponse.self)

    static let updateMe = APIOperation(
        .patch, "/v1/me", id: "updateMe", service: .identity,
        summary: "Change display name, avatar (empty string removes it), IANA time zone or locale.",
        request: ProfileUpdateRequest.self, response: AccountResponse.self)

    static let attachCredentials = APIOperation(
        .post, "/v1/me/credentials", id: "attachCredentials", service: .identity,
        summary: "A guest attaches an e-mail and password, keeping the account and everything in it.",
        request: CredentialsRequest.self, response: AccountResponse.self, problems: [.credentialsExist, .emailTaken])

    static let getPreferences = APIOperation(
        .get, "/v1/me/preferences", id: "getPreferences", service: .identity,
        summary: "Notification switch and categories switched off, daily reminder time, quiet hours and telemetry opt-out (defaults until saved).",
        response: PreferencesResponse.self)

    static let putPreferences = APIOperation(
        .put, "/v1/me/preferences", id: "putPreferences", service: .identity,
        summary: "Replace the preferences; takes effect at once (telemetry opt-out included).",
        request: PreferencesRequest.self, response: PreferencesResponse.self)

    static let getTrainingPlan = APIOperation(
        .get, "/v1/me/training-plan", id: "getTrainingPlan", service: .identity,
        summary: "The onboarding answers and accepted values, with the current recommendation (404 before onboarding).",
        response: TrainingPlanResponse.self, problems: [.trainingPlanNotFound])

    static let putTrainingPlan = APIOperation(
        .put, "/v1/me/training-plan", id: "putTrainingPlan", service: .identity,
        summary: "Save the onboarding answers and accepted values; omitted values take the recommendation.",
        request: TrainingPlanRequest.self, response: TrainingPlanResponse.self)

    static let previewTrainingPlan = APIOperation(
        .post, "/v1/me/training-plan/preview", id: "previewTrainingPlan", service: .identity,
        summary: "The recommendations for these answers, without saving anything.",
        request: TrainingPlanRequest.self, response: TrainingPlanResponse.self)

    static let deleteMe = APIOperation(
        .delete, "/v1/me", id: "deleteMe", service: .identity,
        summary: "Delete the account and all its data. Needs ?confirm=true; without it answers 422 confirmation-required.",
        query: [.init("confirm", "Must be true: deleting erases the account's data for good.", schema: JSONSchema.boolean.refined(.init(default: false)))],
        status: .noContent, problems: [.confirmationRequired])

    static let searchUsers = APIOperation(
        .get, "/v1/users", id: "searchUsers", service: .identity,
        summary: "Find people by display name (public profiles only).",
        query: [
            APIOperation.QueryParameter(
                "q", "Part of a display name (surrounding white space is ignored).",
                schema: JSONSchema.string().refined(.text(maxLength: ProfileRules.maxDisplayNameLength, nonBlank: true, example: "Ann")),
                required: true)
        ]
            + APIOperation.QueryParameter.pagination,
        response: Page<PublicProfile>.self)

    // MARK: Friends

    static let listFriends = APIOperation(
        .get, "/v1/friends", id: "listFriends", service: .identity, summary: "The caller's friends, by display name.",
        query: APIOperation.QueryParameter.pagination, response: Page<Friend>.self)

    static let removeFriend = APIOperation(
        .delete, "/v1/friends/{userID}", id: "removeFriend", service: .identity, summary: "End a friendship.", status: .noContent)

    static let listFriendRequests = APIOperation(
        .get, "/v1/friend-requests", id: "listFriendRequests", service: .identity, summary: "Pending friend requests, oldest first.",
        query: [
            APIOperation.QueryParameter(
                "direction", "Requests sent to the caller (incoming) or by the caller (outgoing).",
                schema: JSONSchema.of(FriendRequestDirection.self).refined(.init(default: "incoming")))
        ]
            + APIOperation.QueryParameter.pagination,
        response: Page<FriendRequest>.self)

    static let sendFriendRequest = APIOperation(
        .post, "/v1/friend-requests", id: "sendFriendRequest", service: .identity,
        summary: "Ask someone to be friends (409 if already friends or a request between you is pending).",
        request: FriendRequestCreation.self, status: .created, response: FriendRequest.self, problems: [.notFound, .alreadyFriends, .friendRequestExists])

    static let acceptFriendRequest = APIOperation(
        .post, "/v1/friend-requests/{requestID}/accept", id: "acceptFriendRequest", service: .identity,
        summary: "Accept a request sent to you.", response: Friend.self)

    static let declineFriendRequest = APIOperation(
        .post, "/v1/friend-requests/{requestID}/decline", id: "declineFriendRequest", service: .identity,
        summary: "Decline a request sent to you.", status: .noContent)

    static let cancelFriendRequest = APIOperation(
        .delete, "/v1/friend-requests/{requestID}", id: "cancelFriendRequest", service: .identity,
        summary: "Withdraw a request you sent.", status: .noContent)

    // MARK: Groups

    static let createGroup = APIOperation(
        .post, "/v1/groups", id: "createGroup", service: .identity, summary: "Create a group (household, friends or team); you own it.",
        request: GroupCreationRequest.self, status: .created, response: GroupSummary.self)

    static let listGroups = APIOperation(
        .get, "/v1/groups", id: "listGroups", service: .identity, summary: "The groups you belong to, in the order you joined them.",
        query: APIOperation.QueryParameter.pagination, response: Page<GroupSummary>.self)

    static let getGroup = APIOperation(
        .get, "/v1/groups/{groupID}", id: "getGroup", service: .identity, summary: "A group you belong to (404 otherwise).",
        response: GroupSummary.self)

    static let updateGroup = APIOperation(
        .patch, "/v1/groups/{groupID}", id: "updateGroup", service: .identity, summary: "Rename a group or change its time zone (owner only).",
        request: GroupUpdateRequest.self, response: GroupSummary.self, problems: [.ownerOnly])

    static let listMembers = APIOperation(
        .get, "/v1/groups/{groupID}/members", id: "listGroupMembers", service: .identity, summary: "Members and their roles, in joining order.",
        query: APIOperation.QueryParameter.pagination, response: Page<GroupMember>.self)

    static let createInvite = APIOperation(
        .post, "/v1/groups/{groupID}/invites", id: "createGroupInvite", service: .identity,
        summary: "Create an invite code and link (any member); expires after expiresInHours (1-720, default 72).",
        request: InviteCreationRequest.self, requestRequired: false, status: .created, response: GroupInvite.self)

    static let listInvites = APIOperation(
        .get, "/v1/groups/{groupID}/invites", id: "listGroupInvites", service: .identity, summary: "The group's usable invites.",
        query: APIOperation.QueryParameter.pagination, response: Page<GroupInvite>.self)

    static let revokeInvite = APIOperation(
        .delete, "/v1/groups/{groupID}/invites/{code}", id: "revokeGroupInvite", service: .identity,
        summary: "Revoke an invite (its creator or the owner).", status: .noContent, problems: [.forbidden])

    static let joinGroup = APIOperation(
        .post, "/v1/groups/join", id: "joinGroup", service: .identity,
        summary: "Join a group with an invite code (404 unknown or revoked, 410 expired). Joining again changes nothing.",
        request: JoinGroupRequest.self, response: GroupSummary.self, problems: [.notFound, .inviteExpired])

    static let leaveGroup = APIOperation(
        .post, "/v1/groups/{groupID}/leave", id: "leaveGroup", service: .identity,
        summary: "Leave a group. An owner's ownership passes to the longest-standing member; the last member leaving deletes the group.",
        status: .noContent)

    static let removeMember = APIOperation(
        .delete, "/v1/groups/{groupID}/members/{userID}", id: "removeGroupMember", service: .identity,
        summary: "Remove a member (owner only).", status: .noContent, problems: [.ownerOnly, .cannotRemoveSelf])

    static let all = [
        registerGuest, register, signIn, socialSignIn, refresh, signOut,
        forgotPassword, resetPassword, verifyEmail, getEmail, changeEmail, changePassword, listSessions, endSession, endOtherSessions,
        me, updateMe, attachCredentials, getPreferences, putPreferences, getTrainingPlan, putTrainingPlan, previewTrainingPlan, deleteMe,
        searchUsers,
        listFriends, removeFriend, listFriendRequests, sendFriendRequest, acceptFriendRequest, declineFriendRequest, cancelFriendRequest,
        createGroup, listGroups, getGroup, updateGroup, listMembers, createInvite, listInvites, revokeInvite, joinGroup, leaveGroup,
        removeMember,
    ]
}
