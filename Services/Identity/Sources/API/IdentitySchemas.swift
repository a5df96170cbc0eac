import IdentityDomain
import SurgeContracts

// What the OpenAPI document says about identity's request fields beyond their Swift types: the rules `ProfileRules`,
// `EmailAddress`, `PasswordPolicy`, `GroupRules`, `InvitePolicy` and `TrainingPlan` enforce, and examples.

enum IdentitySchemas {
    /// Trimmed, not empty, at most 50 characters, no control characters (`ProfileRules.displayName`).
    static let displayName = JSONSchema.Refinement.text(
        maxLength: ProfileRules.maxDisplayNameLength, nonBlank: true, controls: false, example: "Ann")
    static let timeZone = JSONSchema.Refinement.ianaTimeZone
    static let locale = JSONSchema.Refinement(
        maxLength: 35, pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", description: "A BCP 47 language tag.", example: "en-US")
    /// `EmailAddress`'s rule: a local part of 1 to 64 characters without white space, controls or `@`, not starting or
    /// ending with a dot and without two in a row, then a dotted domain of letters, digits and inner hyphens (the
    /// server also takes non-ASCII letters there). The negative lookahead costs generators nothing.
    static let email = JSONSchema.Refinement(
        maxLength: EmailAddress.maxLength,
        pattern: "^(?![^@]*\\.\\.)[^\\s@.\\u0000-\\u001F\\u007F-\\u009F]([^\\s@\\u0000-\\u001F\\u007F-\\u009F]{0,62}[^\\s@.\\u0000-\\u001F\\u007F-\\u009F])?"
            + "@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$",
        example: "ann@example.com")
    /// The pattern states the rules a pattern can: no NUL, at least the minimum length, not one character repeated
    /// (a negative lookahead, so generators of valid data need not filter; `not` would cost a generated client its
    /// plain `String`).
    static let password = JSONSchema.Refinement(
        minLength: PasswordPolicy.minimumLength, maxLength: PasswordPolicy.maximumLength,
        pattern: "^(?!([\\s\\S])\\1*$)[^\\u0000]{\(PasswordPolicy.minimumLength),}$",
        description: "From \(PasswordPolicy.minimumLength) to \(PasswordPolicy.maximumLength) characters; "
            + "not one character repeated, not the e-mail's name, not a common password.")
    /// Trimmed, not empty, at most 100 characters, no control characters.
    static let deviceName = JSONSchema.Refinement.text(
        maxLength: Sessions.maxNameLength, nonBlank: true, controls: false, example: "Ann's phone")
    /// `AccountToken`'s text: 64 base64url characters.
    static let mailedToken = JSONSchema.Refinement(
        pattern: "^[A-Za-z0-9_-]{\(AccountToken.textLength)}$", description: "The token from the mailed link (after `token=`).",
        example: .string(String(repeating: "Q", count: AccountToken.textLength)))
}

extension GuestRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "displayName": IdentitySchemas.displayName, "timeZone": IdentitySchemas.timeZone, "locale": IdentitySchemas.locale,
        "deviceName": IdentitySchemas.deviceName,
    ]
}

extension RegisterRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "email": IdentitySchemas.email, "password": IdentitySchemas.password, "displayName": IdentitySchemas.displayName,
        "timeZone": IdentitySchemas.timeZone, "locale": IdentitySchemas.locale, "deviceName": IdentitySchemas.deviceName,
    ]
}

extension CredentialsRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["email": IdentitySchemas.email, "password": IdentitySchemas.password]
}

extension SignInRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "email": .init(example: "ann@example.com"), "deviceName": IdentitySchemas.deviceName,
        "deviceToken": .init(
            description: "The `deviceToken` this device got at its last sign-in to the account (or its registration): the device is known, so "
                + "failures from other addresses do not refuse it (docs/accounts.md, \"Sign-in throttling\"). An unknown token is ignored."),
    ]
}

extension SessionResponse: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "deviceToken": .init(
            description: "After a password sign-in or registration: keep it on this device and send it with the next sign-in "
                + "(`deviceToken`); each sign-in answers a new one. Valid a year.")
    ]
}

extension ForgotPasswordRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["email": IdentitySchemas.email]
}

extension ResetPasswordRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["token": IdentitySchemas.mailedToken, "password": IdentitySchemas.password]
}

extension VerifyEmailRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["token": IdentitySchemas.mailedToken]
}

extension ChangeEmailRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["email": IdentitySchemas.email]
}

extension ChangePasswordRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "newPassword": IdentitySchemas.password, "deviceName": IdentitySchemas.deviceName,
    ]
}

extension SocialSignInRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "displayName": IdentitySchemas.displayName, "timeZone": IdentitySchemas.timeZone, "deviceName": IdentitySchemas.deviceName,
    ]
}

extension ProfileUpdateRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "displayName": IdentitySchemas.displayName, "timeZone": IdentitySchemas.timeZone, "locale": IdentitySchemas.locale,
        "avatarURL": .init(
            maxLength: ProfileRules.maxAvatarURLLength,
            pattern: "^(https://[A-Za-z0-9.-]+(:[0-9]+)?([/?#](%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$&'()*+,;=:@/?-])*)?)?$",
            description: "An https URL, or an empty string to remove the avatar.", example: "https://example.com/ann.jpg"),
    ]
}

extension TrainingPlanRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "maxPushUpsInOneSet": .range(TrainingAnswers.maxPushUpsRange),
        "daysPerWeek": .range(TrainingAnswers.daysPerWeekRange),
        "dailyGoal": .range(TrainingPlan.dailyGoalRange),
        "startingSeries": .range(TrainingPlan.startingSeriesRange),
        "recoverySeconds": .range(TrainingPlan.recoverySecondsRange),
    ]
}

extension PreferencesRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "quietHours": .init(
            description: "Leave it out for no quiet hours. Quiet hours that start and end at the same minute span no time and are "
                + "saved as none (to silence the whole day, turn notifications off)."),
        "disabledCategories": .init(
            description: "Switched off one by one while notifications stay on: `reminders` (daily reminder, re-engagement, close to the daily goal), `streaks` "
                + "(milestones, streak at risk), `social` (friend requests, invitations, overtaken), `badges`, `digest` (Sunday summary), `chores` (a chore due now). "
                + "A repeated category counts once. Leave it out for none."),
    ]
}

extension GroupCreationRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "name": .text(maxLength: GroupRules.maxNameLength, nonBlank: true, controls: false, example: "Flat 3B"), "timeZone": IdentitySchemas.timeZone,
    ]
}

extension GroupUpdateRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "name": .text(maxLength: GroupRules.maxNameLength, nonBlank: true, controls: false), "timeZone": IdentitySchemas.timeZone,
    ]
}

extension InviteCreationRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "expiresInHours": .range(InvitePolicy.hoursRange, default: InvitePolicy.defaultHours)
    ]
}

extension JoinGroupRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "code": .init(description: "The invite code: case-insensitive; spaces and dashes are ignored.", example: "K7MP-Q2RX-VA")
    ]
}
