import Foundation
import JWTKit
import Logging
import Synchronization

/// Verifies access tokens against identity's published keys. Keys are fetched from the JWKS URL at start, every
/// `refreshInterval`, and again (at most every 30 seconds) when a token names a key id not yet known, so a key
/// rotation needs no gateway restart. A token must name its key: it is never tried against some other key.
public final class AccessTokenVerifier: Sendable {
    public enum Failure: Error, Equatable {
        /// No keys could be loaded yet: identity has not answered.
        case keysUnavailable
        /// Malformed, expired, wrongly signed or for someone else.
        case invalid
    }

    public typealias FetchJWKS = @Sendable () async throws -> String

    private struct State {
        var keys: JWTKeyCollection?
        var keyIDs: Set<String> = []
        var lastRefresh: ContinuousClock.Instant?
        /// Refetches caused by unknown key ids are limited, so garbage tokens cannot hammer identity.
        var lastUnknownKeyRefresh: ContinuousClock.Instant?
    }

    private let fetch: FetchJWKS
    private let state = Mutex(State())
    private let logger: Logger
    public let refreshInterval: Duration

    public init(refreshInterval: Duration = .seconds(300), logger: Logger, fetch: @escaping FetchJWKS) {
        self.fetch = fetch
        self.logger = logger
        self.refreshInterval = refreshInterval
    }

    /// Returns the caller's claims, or throws `Failure`.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        guard let keyID = Self.keyID(of: token) else { throw Failure.invalid }
        let (loaded, stale, known) = state.withLock { state in
            (
                state.keys != nil, state.lastRefresh.map { ContinuousClock.now - $0 > refreshInterval } ?? true,
                state.keyIDs.contains(keyID)
            )
        }
        if !loaded || stale {
            await refresh()
        } else if !known {
            let allowed = state.withLock { state -> Bool in
                if let last = state.lastUnknownKeyRefresh, ContinuousClock.now - last < .seconds(30) { return false }
                state.lastUnknownKeyRefresh = .now
                return true
            }
            if allowed { await refresh() }
        }
        let (keys, knownNow) = state.withLock { ($0.keys, $0.keyIDs.contains(keyID)) }
        guard let keys else { throw Failure.keysUnavailable }
        guard knownNow else { throw Failure.invalid }
        do {
            return try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw Failure.invalid
        }
    }

    /// Fetches the JWKS now. Returns whether keys were loaded.
    @discardableResult
    public func refresh() async -> Bool {
        do {
            let json = try await fetch()
            let jwks = try JSONDecoder().decode(JWKS.self, from: Data(json.utf8))
            let keys = JWTKeyCollection()
            try await keys.add(jwks: jwks)
            let ids = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
            state.withLock {
                $0.keys = keys
                $0.keyIDs = ids
                $0.lastRefresh = .now
            }
            return true
        } catch {
            logger.warning("Could not load access-token keys", metadata: ["error": "\(error)"])
            state.withLock { $0.lastRefresh = .now }
            return false
        }
    }

    /// The `kid` of a compact JWS, read from its (not yet verified) header.
    static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first else { return nil }
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }
}
