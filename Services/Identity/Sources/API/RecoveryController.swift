import Foundation
import Hummingbird
import IdentityDomain
import SurgeRuntime

/// Password reset, address verification and change, password change, and the caller's devices (docs/accounts.md).
struct RecoveryController {
    let accounts: Accounts
    let recovery: Recovery
    let sessions: Sessions
    let passwords: PasswordHasher
    let auth: AuthController

    static let invalidLinkToken = Problem(
        slug: "invalid-link-token", title: "Link not valid", status: .notFound,
        detail: "This link is unknown, already used or expired. Ask for a new one.")

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.forgotPassword, use: forgotPassword)
        router.add(IdentityAPI.resetPassword, use: resetPassword)
        router.add(IdentityAPI.verifyEmail, use: verifyEmail)
        router.add(IdentityAPI.getEmail, use: getEmail)
        router.add(IdentityAPI.changeEmail, use: changeEmail)
        router.add(IdentityAPI.changePassword, use: changePassword)
        router.add(IdentityAPI.listSessions, use: listSessions)
        router.add(IdentityAPI.endSession, use: endSession)
        router.add(IdentityAPI.endOtherSessions, use: endOtherSessions)
    }

    /// Only records the request (the relay decides later whether anything is mailed), so the answer and its time do
    /// not depend on whether the address has an account.
    @Sendable func forgotPassword(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let body = try await request.decode(as: ForgotPasswordRequest.self, context: context)
        var errors: [Problem.FieldError] = []
        guard let address = EmailAddress.validate(body.email, errors: &errors) else { throw Problem.validation(errors) }
        let source = SignInSource(address: context.clientAddress)
        let decision = try await recovery.requestPasswordReset(email: address.value, source: source)
        if case .refuse(let retryAfter) = decision {
            context.logger.info("Password reset requests throttled", metadata: ["source": "\(source)"])
            throw Problem(
                slug: "too-many-mail-requests", title: "Too many requests", status: .tooManyRequests,
                detail: "Too many password resets asked for from your address. Try again later.", retryAfter: retryAfter)
        }
        return .accepted
    }

    /// The token is checked first and spent only with a new password that keeps the rules, so a refused password
    /// does not cost the user their link.
    @Sendable func resetPassword(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let body = try await request.decode(as: ResetPasswordRequest.self, context: context)
        let token = try Self.token(body.token)
        guard let live = try await recovery.isLiveResetToken(token) else { throw Self.invalidLinkToken }
        let broken = PasswordPolicy.fieldErrors(body.password, email: EmailAddress(live.email))
        guard broken.isEmpty else { throw Problem.validation(broken) }
        let hash = try await passwords.hash(body.password)
        switch try await recovery.resetPassword(token, passwordHash: hash, trace: context.trace) {
        case .done:
            context.logger.info("Password reset; every session revoked", metadata: ["user": "\(live.userID)"])
            return .noContent
        case .refused(let reason):
            context.logger.info("Reset token refused", metadata: ["reason": "\(reason.rawValue)"])
            throw Self.invalidLinkToken
        case .emailTaken:
            throw Self.invalidLinkToken
        }
    }

    @Sendable func verifyEmail(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let body = try await request.decode(as: VerifyEmailRequest.self, context: context)
        switch try await recovery.verifyEmail(try Self.token(body.token)) {
        case .done:
            return .noContent
        case .refused(let reason):
            context.logger.info("Verification token refused", metadata: ["reason": "\(reason.rawValue)"])
            throw Self.invalidLinkToken
        case .emailTaken:
            throw IdentityError.emailTaken
        }
    }

    @Sendable func getEmail(request: Request, context: SurgeRequestContext) async throws -> EmailStatusResponse {
        guard let status = try await recovery.emailStatus(try context.caller()) else { throw IdentityError.accountGone }
        return EmailStatusResponse(email: status.email, verified: status.verified, pendingEmail: status.pending)
    }

    @Sendable func changeEmail(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<EmailStatusResponse> {
        let caller = try context.caller()
        let body = try await request.decode(as: ChangeEmailRequest.self, context: context)
        var errors: [Problem.FieldError] = []
        guard let address = EmailAddress.validate(body.email, errors: &errors) else { throw Problem.validation(errors) }
        _ = try await checkPassword(body.password, of: caller, context: context)
        try await recovery.requestEmailChange(caller, to: address)
        return EditedResponse(status: .accepted, response: try await getEmail(request: request, context: context))
    }

    @Sendable func changePassword(request: Request, context: SurgeRequestContext) async throws -> SessionResponse {
        let caller = try context.caller()
        let body = try await request.decode(as: ChangePasswordRequest.self, context: context)
        let device = try AuthController.deviceName(body.deviceName, request: request)
        let account = try await checkPassword(body.currentPassword, of: caller, context: context)
        let broken = PasswordPolicy.fieldErrors(body.newPassword, email: account.email.flatMap { EmailAddress($0) }, field: "newPassword")
        guard broken.isEmpty else { throw Problem.validation(broken) }
        try await accounts.changePassword(caller, passwordHash: try await passwords.hash(body.newPassword), trace: context.trace)
        return try await auth.session(for: account, device: device)
    }

    /// The caller's account, once `password` proved to be its password; throttled like a sign-in to its address, so
    /// a stolen access token cannot be used to guess the password.
    private func checkPassword(_ password: String, of caller: UUID, context: SurgeRequestContext) async throws -> Account {
        guard let account = try await accounts.account(caller) else { throw IdentityError.accountGone }
        let source = SignInSource(address: context.clientAddress)
        let key = account.email ?? caller.uuidString.lowercased()
        if case .refused(let retryAfter, let limit) = try await sessions.admitAttempt(email: key, source: source) {
            throw AuthController.throttled(limit, retryAfter: retryAfter)
        }
        let hash = try await accounts.passwordHash(caller)
        guard try await passwords.verify(password, hash: hash) else { throw AuthController.invalidCredentials }
        try await sessions.succeeded(email: key, source: source)
        return account
    }

    /// The caller's own session is marked `current`: the gateway forwards its access token's `sid`.
    @Sendable func listSessions(request: Request, context: SurgeRequestContext) async throws -> DeviceSessionList {
        let sessions = try await sessions.list(try context.caller())
        return DeviceSessionList(items: sessions.map {
            DeviceSessionView(
                sessionID: $0.sessionID, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, current: $0.sessionID == context.callerSessionID)
        })
    }

    @Sendable func endSession(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        guard try await sessions.end(try request.uuidParameter("sessionID", context: context), of: caller, trace: context.trace) else {
            throw Problem.notFound("No such session.")
        }
        return .noContent
    }

    @Sendable func endOtherSessions(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let body = try await request.decode(as: EndOtherSessionsRequest.self, context: context)
        guard try await sessions.endOthers(of: caller, keeping: body.refreshToken, trace: context.trace) else { throw AuthController.invalidRefreshToken }
        return .noContent
    }

    /// A token that cannot be one of ours is a broken field (422), not an unknown link.
    static func token(_ text: String) throws -> AccountToken {
        guard let token = AccountToken(text: text) else {
            throw Problem.validation(field: "token", "must be the \(AccountToken.textLength)-character token from the link")
        }
        return token
    }
}
