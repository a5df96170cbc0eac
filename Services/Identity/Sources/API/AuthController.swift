import Crypto
import Foundation
import HTTPTypes
import HummingbirdBcrypt
import Hummingbird
import IdentityDomain
import JWTKit
import NIOPosix
import SurgeAuth
import SurgeContracts
import SurgeRuntime

/// Hashes and checks passwords with bcrypt on NIO's thread pool, never on the cooperative pool. bcrypt is given the
/// base64 of the password's SHA-256 (44 bytes), so every character of a long passphrase counts, where bcrypt alone
/// would ignore everything after 72 bytes.
struct PasswordHasher: Sendable {
    let cost: UInt8
    /// Checked against when the e-mail is unknown, so that an unknown e-mail takes as long as a wrong password.
    let decoy: String

    init(cost: UInt8) async throws {
        self.cost = cost
        decoy = try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash("decoy password, never matches", cost: cost) }
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        let digest = Self.digest(password)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(digest, cost: cost) }
    }

    static func digest(_ password: String) -> String { Data(SHA256.hash(data: Data(password.utf8))).base64EncodedString() }

    func verify(_ password: String, hash: String?) async throws -> Bool {
        let stored = hash ?? decoy
        let digest = Self.digest(password)
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(digest, hash: stored) }
        return matches && hash != nil
    }
}

/// Sign-up, sign-in (password, guest, Apple, Google), refresh and sign-out, and the JWKS the gateway verifies access
/// tokens with.
struct AuthController {
    let accounts: Accounts
    let sessions: Sessions
    let issuer: AccessTokenIssuerSlot
    let passwords: PasswordHasher
    let social: SocialTokenVerifier
    let clock: ServiceClock

    static let invalidCredentials = Problem(
        slug: "invalid-credentials", title: "Invalid credentials", status: .unauthorized, detail: "The e-mail or the password is wrong.")
    static let invalidRefreshToken = Problem(
        slug: "invalid-refresh-token", title: "Invalid refresh token", status: .unauthorized,
        detail: "The refresh token is unknown, expired or signed out. Sign in again.")
    static let refreshTokenReused = Problem(
        slug: "refresh-token-reused", title: "Refresh token reused", status: .unauthorized,
        detail: "This refresh token was already used. For safety every session it belongs to was signed out; sign in again.")

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(IdentityAPI.registerGuest, use: registerGuest)
        router.add(IdentityAPI.register, use: register)
        router.add(IdentityAPI.signIn, use: signIn)
        router.add(IdentityAPI.socialSignIn, use: socialSignIn)
        router.add(IdentityAPI.refresh, use: refresh)
        router.add(IdentityAPI.signOut, use: signOut)
        router.get("/internal/jwks.json") { _, _ in
            let data = try SurgeJSON.apiEncode(try issuer.current.jwks)
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    @Sendable func registerGuest(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<SessionResponse> {
        let body = try await request.decode(as: GuestRequest.self, context: context)
        let device = try Self.deviceName(body.deviceName, request: request)
        let registration = try GuestRegistration(displayName: body.displayName, timeZone: body.timeZone, locale: body.locale)
        let account = try await accounts.registerGuest(registration, trace: context.trace)
        return EditedResponse(status: .created, response: try await session(for: account, device: device))
    }

    @Sendable func register(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<SessionResponse> {
        let body = try await request.decode(as: RegisterRequest.self, context: context)
        let device = try Self.deviceName(body.deviceName, request: request)
        let registration = try PasswordRegistration(
            email: body.email, password: body.password, displayName: body.displayName, timeZone: body.timeZone, locale: body.locale)
        let hash = try await passwords.hash(registration.password)
        let account = try await accounts.registerWithPassword(registration, passwordHash: hash, trace: context.trace)
        var response = try await session(for: account, device: device)
        response.deviceToken = try await sessions.rememberDevice(userID: account.id, replacing: nil)
        return EditedResponse(status: .created, response: response)
    }

    /// A wrong e-mail and a wrong password look the same (same answer, same bcrypt work). Throttling (see
    /// `SignInThrottle`) is per (e-mail, source): after five failures from one source, that source waits 1 minute,
    /// doubling per further failure up to 15; a source with no failures is let through. A source failing across
    /// many e-mails, and an e-mail failing from very many sources, are refused too, except on a device presenting the
    /// device token of an earlier sign-in (each sign-in answers a new one). Refusals are 429 with Retry-After, decided
    /// before the password is checked.
    @Sendable func signIn(request: Request, context: SurgeRequestContext) async throws -> SessionResponse {
        let body = try await request.decode(as: SignInRequest.self, context: context)
        let device = try Self.deviceName(body.deviceName, request: request)
        let email = EmailAddress.normalise(body.email)
        guard !email.isEmpty, email.count <= EmailAddress.maxLength else { throw Self.invalidCredentials }
        let source = SignInSource(address: context.clientAddress)
        switch try await sessions.admitAttempt(email: email, source: source, deviceToken: body.deviceToken) {
        case .refused(let retryAfter, let limit):
            context.logger.info("Sign-in throttled", metadata: ["limit": "\(limit.rawValue)", "source": "\(source)"])
            throw Self.throttled(limit, retryAfter: retryAfter)
        case .admitted:
            break
        }
        var found: (account: Account, passwordHash: String)?
        if let address = EmailAddress(email) { found = try await accounts.passwordAccount(email: address) }
        guard try await passwords.verify(body.password, hash: found?.passwordHash), let account = found?.account else {
            throw Self.invalidCredentials
        }
        try await sessions.succeeded(email: email, source: source)
        var response = try await session(for: account, device: device)
        response.deviceToken = try await sessions.rememberDevice(userID: account.id, replacing: body.deviceToken)
        return response
    }

    /// The name a device goes by in the session list: the one the client gave (the rules of a display name, up to 100
    /// characters), else its user agent, else "Unknown device".
    static func deviceName(_ given: String?, request: Request) throws -> String {
        if let given {
            var errors: [Problem.FieldError] = []
            guard let name = ProfileRules.displayName(given, field: "deviceName", maxLength: Sessions.maxNameLength, errors: &errors)
            else { throw Problem.validation(errors) }
            return name
        }
        let agent = request.headers[.userAgent]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let printable = String(agent.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
        return printable.isEmpty ? "Unknown device" : String(printable.prefix(Sessions.maxNameLength))
    }

    static func throttled(_ limit: SignInThrottle.Limit, retryAfter: Int) -> Problem {
        let detail =
            switch limit {
            case .pair: "Too many failed sign-ins for this account from your address. Try again later."
            case .source: "Too many failed sign-ins from your address. Try again later."
            case .account: "Too many failed sign-ins for this account. Try again later."
            }
        return Problem(
            slug: "sign-in-throttled", title: "Too many attempts", status: .tooManyRequests, detail: detail, retryAfter: retryAfter)
    }

    @Sendable func socialSignIn(request: Request, context: SurgeRequestContext) async throws -> SocialSessionResponse {
        let body = try await request.decode(as: SocialSignInRequest.self, context: context)
        var errors: [Problem.FieldError] = []
        let name = body.displayName.map { ProfileRules.displayName($0, errors: &errors) } ?? nil
        let zone = body.timeZone.map { ProfileRules.timeZone($0, errors: &errors) } ?? nil
        guard errors.isEmpty else { throw Problem.validation(errors) }
        let identity: SocialIdentity
        do {
            identity = try await social.verify(body.idToken, provider: body.provider, now: clock.now())
        } catch .disabled {
            // The request is well formed; this deployment has the provider switched off.
            throw Problem(
                slug: "provider-not-enabled", title: "Provider not enabled", status: .forbidden,
                detail: "Sign-in with \(body.provider.rawValue) is not enabled on this server.")
        } catch .keysUnavailable {
            throw Problem.unavailable("\(body.provider.rawValue) cannot be reached to check the token; try again shortly.", retryAfter: 5)
        } catch .invalid(let reason) {
            context.logger.info("Refused an ID token", metadata: ["provider": "\(body.provider.rawValue)", "reason": "\(reason)"])
            throw Problem(
                slug: "invalid-id-token", title: "Invalid ID token", status: .unauthorized,
                detail: "The \(body.provider.rawValue) ID token is malformed, expired, wrongly signed or meant for another app.")
        }
        let (account, created) = try await accounts.socialSignIn(identity, requestedName: name, timeZone: zone, trace: context.trace)
        let session = try await session(for: account, device: Self.deviceName(body.deviceName, request: request))
        return SocialSessionResponse(user: session.user, tokens: session.tokens, newAccount: created)
    }

    @Sendable func refresh(request: Request, context: SurgeRequestContext) async throws -> SessionResponse {
        let body = try await request.decode(as: RefreshTokenRequest.self, context: context)
        switch try await sessions.rotate(body.refreshToken, trace: context.trace) {
        case .unknown, .revoked, .expired:
            throw Self.invalidRefreshToken
        case .reused:
            throw Self.refreshTokenReused
        case .rotated(let userID, let next):
            guard let account = try await accounts.account(userID) else { throw Self.invalidRefreshToken }
            return SessionResponse(user: account, tokens: try await tokens(for: account, refresh: next))
        }
    }

    @Sendable func signOut(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let body = try await request.decode(as: RefreshTokenRequest.self, context: context)
        try await sessions.signOut(body.refreshToken, trace: context.trace)
        return .noContent
    }

    /// A new device session for the account, named for the session list.
    func session(for account: Account, device: String) async throws -> SessionResponse {
        let refresh = try await sessions.start(userID: account.id, deviceName: device)
        return SessionResponse(user: account, tokens: try await tokens(for: account, refresh: refresh))
    }

    /// Access tokens are stamped with the real time, not the service clock: the gateway checks their expiry against
    /// its own real clock. Every token identity issues (registration, sign-in, social sign-in, refresh, recovery) is
    /// made here, with the account's roles as they are now (`AdminRoles`) and its session (`sid`: the refresh token's
    /// family), so the gateway can refuse it once that session is revoked.
    private func tokens(for account: Account, refresh: Sessions.IssuedRefreshToken) async throws -> Tokens {
        let roles = try await accounts.roles(of: account.id)
        let access = try await issuer.current.issue(userID: account.id, kind: account.kind.rawValue, roles: roles, sessionID: refresh.familyID)
        return Tokens(
            accessToken: access.token, accessTokenExpiresAt: access.expiresAt, refreshToken: refresh.token,
            refreshTokenExpiresAt: refresh.expiresAt)
    }
}
