import Foundation
import JWTKit
import Logging
import SurgeContracts
import Synchronization

/// Verifies access tokens against identity's published keys. Keys are fetched on the first verification, again once
/// `refreshInterval` has passed, and at once when a token names a key id not yet known (at most once per
/// `unknownKeyInterval`), so a token signed by a newly rotated key is accepted within a second. One fetch runs at a time and concurrent verifications wait for it; while no
/// keys could be loaded, fetches are at least `retryInterval` apart, so tokens arriving while identity is down do not
/// hammer it. A token must name its key, and its header's `alg` must be the algorithm of Surge's keys (`EdDSA`): it is
/// never tried against some other key or algorithm.
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
        /// When the last fetch finished, loaded or not.
        var lastFetch: ContinuousClock.Instant?
        var lastUnknownKeyFetch: ContinuousClock.Instant?
        var fetching: Task<Void, Never>?
        /// Tokens already verified, with their key id, until they expire or their key is withdrawn.
        var verified: [String: (claims: AccessTokenClaims, keyID: String)] = [:]
    }

    /// Verified tokens remembered; past this the memory is emptied and tokens are verified afresh.
    static let verifiedCapacity = 10_000

    private let fetch: FetchJWKS
    private let state = Mutex(State())
    private let logger: Logger
    public let refreshInterval: Duration
    public let retryInterval: Duration
    public let unknownKeyInterval: Duration
    /// The only `alg` an access token may name: identity signs with Ed25519.
    public static let algorithm = "EdDSA"

    public init(
        refreshInterval: Duration = .seconds(300), retryInterval: Duration = .seconds(2), unknownKeyInterval: Duration = .milliseconds(500),
        logger: Logger, fetch: @escaping FetchJWKS
    ) {
        self.fetch = fetch
        self.logger = logger
        self.refreshInterval = refreshInterval
        self.retryInterval = retryInterval
        self.unknownKeyInterval = unknownKeyInterval
    }

    /// Returns the caller's claims, or throws `Failure`.
    /// An Ed25519 verification costs more CPU than the rest of a proxied request, and a client sends the same token for
    /// its whole life: a token verified once is remembered until it expires, while its key is still published.
    public func verify(_ token: String) async throws -> AccessTokenClaims {
        if let claims = remembered(token) { return claims }
        guard let header = Self.header(of: token), header.algorithm == Self.algorithm else { throw Failure.invalid }
        let keyID = header.keyID
        await fetchIfNeeded(for: keyID)
        let (keys, known) = state.withLock { ($0.keys, $0.keyIDs.contains(keyID)) }
        guard let keys else { throw Failure.keysUnavailable }
        guard known else { throw Failure.invalid }
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token, as: AccessTokenClaims.self)
        } catch {
            throw Failure.invalid
        }
        state.withLock { state in
            if state.verified.count >= Self.verifiedCapacity { state.verified.removeAll(keepingCapacity: true) }
            state.verified[token] = (claims, keyID)
        }
        return claims
    }

    /// The claims of `token` if it was verified before and may still be trusted without verifying it again; nil
    /// otherwise (`verify` then decides). Never waits.
    public func remembered(_ token: String) -> AccessTokenClaims? {
        state.withLock { remembered(token, in: &$0) }
    }

    /// A remembered token is used only while the keys are fresh: a refresh that withdraws its key ends it.
    private func remembered(_ token: String, in state: inout State) -> AccessTokenClaims? {
        guard let entry = state.verified[token] else { return nil }
        let keysFresh = state.lastFetch.map { ContinuousClock.now - $0 <= refreshInterval } ?? false
        guard entry.claims.exp.value > Date(), keysFresh, state.keyIDs.contains(entry.keyID) else {
            state.verified[token] = nil
            return nil
        }
        return entry.claims
    }

    /// Joins the fetch in flight, or starts one if the keys are missing, stale or lack `keyID`.
    private func fetchIfNeeded(for keyID: String) async {
        let fetching = state.withLock { state -> Task<Void, Never>? in
            if let fetching = state.fetching { return fetching }
            let now = ContinuousClock.now
            let sinceFetch = state.lastFetch.map { now - $0 }
            let needed: Bool
            if state.keys == nil {
                needed = sinceFetch.map { $0 >= retryInterval } ?? true
            } else if let sinceFetch, sinceFetch > refreshInterval {
                needed = true
            } else if !state.keyIDs.contains(keyID) {
                needed = state.lastUnknownKeyFetch.map { now - $0 >= unknownKeyInterval } ?? true
                if needed { state.lastUnknownKeyFetch = now }
            } else {
                needed = false
            }
            guard needed else { return nil }
            let task = Task { await self.loadKeys() }
            state.fetching = task
            return task
        }
        await fetching?.value
    }

    private func loadKeys() async {
        var loaded: (keys: JWTKeyCollection, ids: Set<String>)?
        do {
            let json = try await fetch()
            let jwks = try SurgeJSON.decode(JWKS.self, from: Data(json.utf8))
            let keys = JWTKeyCollection()
            try await keys.add(jwks: jwks)
            loaded = (keys, Set(jwks.keys.compactMap { $0.keyIdentifier?.string }))
        } catch {
            logger.warning("Could not load access-token keys", metadata: ["error": "\(error)"])
        }
        state.withLock { state in
            if let loaded {
                state.keys = loaded.keys
                state.keyIDs = loaded.ids
            }
            state.lastFetch = .now
            state.fetching = nil
        }
    }

    /// The `kid` and `alg` of a compact JWS, read from its (not yet verified) header.
    static func header(of token: String) -> (keyID: String, algorithm: String)? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let data = Base64URL.decode(header),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let keyID = object["kid"] as? String, let algorithm = object["alg"] as? String
        else { return nil }
        return (keyID, algorithm)
    }
}
