import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import SurgeAuth
import SurgeRuntime

/// Proves the caller of an authenticated route with the bearer access token. A token of a deleted account, or of a
/// revoked session (its `sid`), is refused even while it has minutes left, whether it is verified now or remembered
/// from an earlier request (`Revocations`).
struct Authenticator: Sendable {
    /// Who a verified access token speaks for.
    struct Caller: Sendable {
        var id: UUID
        var roles: [String]
        /// The token's session (`sid`); nil for a token issued before tokens named it.
        var sessionID: UUID?
    }

    let verifier: AccessTokenVerifier
    let revocations: Revocations

    static let invalidToken = Problem(
        slug: "invalid-token", title: "Invalid access token", status: .unauthorized,
        detail: "The access token is malformed, expired or not signed by Surge. Refresh it or sign in again.")

    /// Fetches identity's JWKS with the gateway's HTTP client.
    static func make(client: HTTPClient, jwksURL: String, revocations: Revocations, logger: Logger) -> Authenticator {
        Authenticator(revocations: revocations, verifier: AccessTokenVerifier(logger: logger) {
            let response = try await client.execute(HTTPClientRequest(url: jwksURL), timeout: .seconds(5))
            guard response.status == .ok else { throw Problem.unavailable("identity answered \(response.status.code)") }
            return String(buffer: try await response.body.collect(upTo: 1 << 20))
        })
    }

    init(revocations: Revocations, verifier: AccessTokenVerifier) {
        self.revocations = revocations
        self.verifier = verifier
    }

    /// Whether an `Authorization` value is a bearer token (the scheme's name in any case, then a space).
    static func isBearer(_ header: String) -> Bool {
        let scheme = "bearer ".utf8
        return header.utf8.count >= scheme.count && zip(header.utf8, scheme).allSatisfy { $0 == $1 || ($1 != UInt8(ascii: " ") && $0 | 0x20 == $1) }
    }

    /// The token of an `Authorization: Bearer …` value, without the spaces or tabs around it. Read as bytes: a token is
    /// base64url, and reading it by `Character` (grapheme breaking) or Foundation's Unicode trimming cost more than the
    /// rest of reading the header.
    static func token(inBearer header: String) -> String {
        let bytes = header.utf8
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = bytes.index(bytes.startIndex, offsetBy: "bearer ".utf8.count, limitedBy: bytes.endIndex) ?? bytes.endIndex
        while start < bytes.endIndex, isBlank(bytes[start]) { start = bytes.index(after: start) }
        var end = bytes.endIndex
        while end > start, isBlank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(Substring(bytes[start..<end]))
    }

    func callerID(of request: Request) async throws -> UUID {
        try await caller(of: request).id
    }

    /// The caller's id, roles (`admin`) and session, from the verified token (remembered tokens keep their claims too).
    func caller(of request: Request) async throws -> Caller {
        guard let header = request.headers[.authorization], Self.isBearer(header) else {
            throw Problem.unauthorized()
        }
        do {
            return try caller(from: try await verifier.verify(Self.token(inBearer: header)))
        } catch let problem as Problem {
            throw problem
        } catch AccessTokenVerifier.Failure.keysUnavailable {
            throw Problem.unavailable("Access tokens cannot be checked right now.")
        } catch {
            throw Self.invalidToken
        }
    }

    /// The caller of a bearer token verified before and still good (`AccessTokenVerifier.remembered`), without
    /// waiting for anything; nil for any other header, which `caller(of:)` answers.
    func rememberedCaller(authorization header: String?) -> Caller? {
        guard let header, Self.isBearer(header),
            let claims = verifier.remembered(Self.token(inBearer: header))
        else { return nil }
        return try? caller(from: claims)
    }

    private func caller(from claims: AccessTokenClaims) throws -> Caller {
        guard let userID = claims.userID else { throw AccessTokenVerifier.Failure.invalid }
        // Answered like an expired token: the client refreshes, and identity refuses the revoked refresh token.
        if let sessionID = claims.sessionID, revocations.isRevoked(session: sessionID) { throw AccessTokenVerifier.Failure.invalid }
        guard !revocations.isErased(userID) else {
            throw Problem(slug: "account-deleted", title: "Account deleted", status: .unauthorized, detail: "This account was deleted.")
        }
        return Caller(id: userID, roles: claims.roles ?? [], sessionID: claims.sessionID)
    }
}
