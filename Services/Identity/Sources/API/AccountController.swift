import Foundation
import Hummingbird
import IdentityDomain
import SurgeRuntime

/// The caller's own account: profile, credentials for guests, preferences, training plan, deletion and export; and
/// the display-name search over everyone's public profile.
struct AccountController {
    let accounts: Accounts
    let exports: AccountExport
    let passwords: PasswordHasher

    static let trainingPlanNotFound = Problem(
        slug: "training-plan-not-found", title: "Not found", status: .notFound,
        detail: "No training plan yet: complete onboarding with PUT /v1/me/training-plan.")

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.me, use: me)
        router.add(IdentityAPI.updateMe, use: updateMe)
        router.add(IdentityAPI.attachCredentials, use: attachCredentials)
        router.add(IdentityAPI.getPreferences, use: getPreferences)
        router.add(IdentityAPI.putPreferences, use: putPreferences)
        router.add(IdentityAPI.getTrainingPlan, use: getTrainingPlan)
        router.add(IdentityAPI.putTrainingPlan, use: putTrainingPlan)
        router.add(IdentityAPI.previewTrainingPlan, use: previewTrainingPlan)
        router.add(IdentityAPI.deleteMe, use: deleteMe)
        router.add(IdentityAPI.searchUsers, use: searchUsers)
        router.get("/internal/export", use: export)
    }

    @Sendable func me(request: Request, context: SurgeRequestContext) async throws -> AccountResponse {
        guard let account = try await accounts.account(try context.caller()) else { throw IdentityError.accountGone }
        return AccountResponse(user: account)
    }

    @Sendable func updateMe(request: Request, context: SurgeRequestContext) async throws -> AccountResponse {
        let caller = try context.caller()
        let body = try await request.decode(as: ProfileUpdateRequest.self, context: context)
        let update = try ProfileUpdate(displayName: body.displayName, avatarURL: body.avatarURL, timeZone: body.timeZone, locale: body.locale)
        return AccountResponse(user: try await accounts.updateProfile(caller, update, trace: context.trace))
    }

    /// A guest attaches an e-mail and password; the account, its id and all its data stay.
    @Sendable func attachCredentials(request: Request, context: SurgeRequestContext) async throws -> AccountResponse {
        let caller = try context.caller()
        let body = try await request.decode(as: CredentialsRequest.self, context: context)
        let credentials = try CredentialsAttachment(email: body.email, password: body.password)
        let hash = try await passwords.hash(credentials.password)
        return AccountResponse(user: try await accounts.attachCredentials(caller, credentials, passwordHash: hash, trace: context.trace))
    }

    @Sendable func getPreferences(request: Request, context: SurgeRequestContext) async throws -> PreferencesResponse {
        let (preferences, updatedAt) = try await accounts.preferences(try context.caller())
        return PreferencesResponse(preferences, updatedAt: updatedAt)
    }

    @Sendable func putPreferences(request: Request, context: SurgeRequestContext) async throws -> PreferencesResponse {
        let caller = try context.caller()
        let body = try await request.decode(as: PreferencesRequest.self, context: context)
        let preferences = try Preferences.validated(
            notificationsEnabled: body.notificationsEnabled, dailyReminderTime: body.dailyReminderTime, quietHours: body.quietHours,
            disabledCategories: body.disabledCategories ?? [], telemetryOptOut: body.telemetryOptOut)
        let (saved, updatedAt) = try await accounts.savePreferences(caller, preferences, trace: context.trace)
        return PreferencesResponse(saved, updatedAt: updatedAt)
    }

    @Sendable func getTrainingPlan(request: Request, context: SurgeRequestContext) async throws -> TrainingPlanResponse {
        guard let (plan, updatedAt) = try await accounts.trainingPlan(try context.caller()) else { throw Self.trainingPlanNotFound }
        return TrainingPlanResponse(plan, updatedAt: updatedAt)
    }

    @Sendable func putTrainingPlan(request: Request, context: SurgeRequestContext) async throws -> TrainingPlanResponse {
        let caller = try context.caller()
        let plan = try await Self.plan(from: request, context: context)
        let updatedAt = try await accounts.saveTrainingPlan(caller, plan, trace: context.trace)
        return TrainingPlanResponse(plan, updatedAt: updatedAt)
    }

    @Sendable func previewTrainingPlan(request: Request, context: SurgeRequestContext) async throws -> TrainingPlanResponse {
        _ = try context.caller()
        return TrainingPlanResponse(try await Self.plan(from: request, context: context), updatedAt: nil)
    }

    static func plan(from request: Request, context: SurgeRequestContext) async throws -> TrainingPlan {
        let body = try await request.decode(as: TrainingPlanRequest.self, context: context)
        return try TrainingPlan(
            activityLevel: body.activityLevel, maxPushUpsInOneSet: body.maxPushUpsInOneSet, daysPerWeek: body.daysPerWeek,
            dailyGoal: body.dailyGoal, startingSeries: body.startingSeries, recoverySeconds: body.recoverySeconds)
    }

    /// Deletes the account. It needs `?confirm=true`, as deleting a challenge does; without it the answer is 422
    /// `confirmation-required` (the request is well-formed but lacks the confirmation; 428 is for conditional-request
    /// headers). The body `{"confirm": true}` of earlier versions is still accepted, though no longer documented (RFC 9110
    /// gives a DELETE body no meaning).
    @Sendable func deleteMe(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let confirm = request.uri.queryParameters["confirm"].map(String.init)
        guard confirm == nil || confirm == "true" || confirm == "false" else {
            throw Problem.validation(field: "confirm", "must be true or false")
        }
        var confirmed = confirm == "true"
        if !confirmed { confirmed = try await request.decodeOptionalBody(DeleteAccountRequest.self, context: context)?.confirm == true }
        guard confirmed else {
            throw Problem(
                slug: "confirmation-required", title: "Confirmation required", status: .unprocessableContent,
                detail: "Deleting an account erases its data for good. Send ?confirm=true to go ahead.",
                errors: [.init(field: "confirm", message: "must be true")])
        }
        try await accounts.delete(caller, trace: context.trace)
        return .noContent
    }

    /// Public profiles whose display name contains `q` (the search parameter's name everywhere; `query`, its name in
    /// earlier versions, is still accepted, though no longer documented).
    @Sendable func searchUsers(request: Request, context: SurgeRequestContext) async throws -> Page<PublicProfile> {
        let caller = try context.caller()
        let parameters = request.uri.queryParameters
        let field = parameters["q"] == nil && parameters["query"] != nil ? "query" : "q"
        let query = (parameters[Substring(field)].map(String.init) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...ProfileRules.maxDisplayNameLength).contains(query.count) else {
            throw Problem.validation(field: field, "must be 1 to \(ProfileRules.maxDisplayNameLength) characters")
        }
        return try await accounts.search(query, excluding: caller, page: try PageRequest(request))
    }

    /// `GET /internal/export`: identity's part of the caller's data export. Not public: the gateway merges it with
    /// the other services' parts.
    @Sendable func export(request: Request, context: SurgeRequestContext) async throws -> IdentityExport {
        guard let export = try await exports.export(try context.caller()) else { throw IdentityError.accountGone }
        return export
    }
}
