import Foundation
import Logging
import PostgresNIO
import SurgeAuth
import SurgeContracts
import SurgeMessaging
import SurgePostgres
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// Identity's use cases over a fresh, migrated schema, with a simulated clock the test moves.
@dynamicMemberLookup
struct IdentityFixture: Sendable {
    let database: TestDatabase
    let client: PostgresClient
    let clock: ServiceClock
    let storage: IdentityStorage
    let useCases: IdentityUseCases
    let trace = TraceContext()
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    subscript<UseCase>(dynamicMember keyPath: KeyPath<IdentityUseCases, UseCase>) -> UseCase {
        useCases[keyPath: keyPath]
    }

    /// Event types in the outbox, oldest first.
    func events() async throws -> [String] {
        try await client.query("SELECT type FROM outbox ORDER BY position", logger: .test("t")).collect().map { try $0.decode(String.self) }
    }

    func payloads(_ type: String) async throws -> [[String: Any]] {
        try await client.query("SELECT payload::text FROM outbox WHERE type = \(type) ORDER BY position", logger: .test("t")).collect().map {
            (try JSONSerialization.jsonObject(with: Data(try $0.decode(String.self).utf8)) as? [String: Any]) ?? [:]
        }
    }

    func count(_ query: PostgresQuery) async throws -> Int {
        try await client.query(query, logger: .test("t")).collect().first?.decode(Int.self) ?? 0
    }

    func advance(_ seconds: TimeInterval) {
        clock.set(clock.now().addingTimeInterval(seconds))
    }

    func guest(_ name: String) async throws -> Account {
        try await useCases.accounts.registerGuest(try GuestRegistration(displayName: name, timeZone: "Europe/Rome", locale: nil), trace: trace)
    }
}

func withIdentityFixture(_ body: @Sendable (IdentityFixture) async throws -> Void) async throws {
    let logger = Logger.test("identity-store")
    try await withTestDatabase(services: ["identity"]) { database in
        let client = database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
        try await PostgresClient.withRunning(client) { client in
            try await Migrator.migrate([MessagingMigrations.set, IdentityMigrations.set], schema: "identity", client: client, logger: logger)
            let clock = ServiceClock(simulated: true)
            clock.set(IdentityFixture.start)
            let storage = IdentityStorage(client: client, outbox: Outbox(service: "identity"), logger: logger)
            let useCases = IdentityUseCases(storage: storage, clock: clock, settings: IdentitySettings(inviteLinkBase: "https://join.example/"))
            try await body(IdentityFixture(database: database, client: client, clock: clock, storage: storage, useCases: useCases))
        }
    }
}

/// The problem a call threw (a domain error as its service describes it), if any.
func problem(_ body: () async throws -> Void) async -> Problem? {
    do {
        try await body()
        return nil
    } catch let problem as Problem {
        return problem
    } catch let error as any ProblemDescribing {
        return error.problem
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

extension Problem {
    var slug: String { String(type.dropFirst(Problem.typeBase.count)) }
}

@Suite("Identity use cases and stores (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct StoreTests {
    @Test("e-mail accounts: unique case-insensitively, found by normalised e-mail; a guest upgrades in place")
    func accounts() async throws {
        try await withIdentityFixture { store in
            let registration = try PasswordRegistration(
                email: "Ann@Example.com", password: "a fine passphrase", displayName: "Ann", timeZone: "Europe/Rome", locale: "it")
            let ann = try await store.accounts.registerWithPassword(registration, passwordHash: "hash-1", trace: store.trace)
            #expect(ann.kind == .password)
            #expect(ann.email == "ann@example.com")
            let again = try PasswordRegistration(email: " ANN@example.COM", password: "another passphrase", displayName: "Ann 2", timeZone: "UTC", locale: nil)
            #expect(await problem { _ = try await store.accounts.registerWithPassword(again, passwordHash: "hash-2", trace: store.trace) }?.slug == "email-taken")
            let found = try await store.accounts.passwordAccount(email: EmailAddress("ann@EXAMPLE.com")!)
            #expect(found?.account.id == ann.id)
            #expect(found?.passwordHash == "hash-1")

            let guest = try await store.guest("Gus")
            #expect(await problem {
                _ = try await store.accounts.attachCredentials(guest.id, try CredentialsAttachment(email: "ann@example.com", password: "quiet river stones"), passwordHash: "h", trace: store.trace)
            }?.slug == "email-taken")
            let upgraded = try await store.accounts.attachCredentials(
                guest.id, try CredentialsAttachment(email: "gus@example.com", password: "quiet river stones"), passwordHash: "h", trace: store.trace)
            #expect(upgraded.id == guest.id)
            #expect(upgraded.kind == .password)
            #expect(upgraded.displayName == "Gus")
            #expect(await problem {
                _ = try await store.accounts.attachCredentials(guest.id, try CredentialsAttachment(email: "gus2@example.com", password: "quiet river stones"), passwordHash: "h", trace: store.trace)
            }?.slug == "credentials-exist")
            #expect(try await store.events() == [UserRegistered.descriptor.type, UserRegistered.descriptor.type, UserUpgraded.descriptor.type])
        }
    }

    @Test("refresh tokens rotate; replaying a rotated one revokes its whole family, not other families; expiry and sign-out")
    func refreshFamilies() async throws {
        try await withIdentityFixture { store in
            let user = try await store.guest("Rita")
            let first = try await store.sessions.start(userID: user.id, deviceName: "Test device")
            let otherDevice = try await store.sessions.start(userID: user.id, deviceName: "Test device")
            guard case .rotated(let userID, let second) = try await store.sessions.rotate(first.token) else { Issue.record("no rotation"); return }
            #expect(userID == user.id)
            #expect(second.familyID == first.familyID)
            #expect(second.token != first.token)
            guard case .rotated(_, let third) = try await store.sessions.rotate(second.token) else { Issue.record("no rotation"); return }

            guard case .reused = try await store.sessions.rotate(first.token) else { Issue.record("reuse not detected"); return }
            guard case .revoked = try await store.sessions.rotate(third.token) else { Issue.record("family not revoked"); return }
            guard case .rotated = try await store.sessions.rotate(otherDevice.token) else { Issue.record("other family revoked"); return }
            guard case .unknown = try await store.sessions.rotate("not-a-token") else { Issue.record("garbage accepted"); return }
            guard case .unknown = try await store.sessions.rotate(String(repeating: "A", count: 43)) else { Issue.record("unknown accepted"); return }
            #expect(try await store.count("SELECT count(*) FROM refresh_tokens WHERE family_id = \(first.familyID) AND revoked_at IS NULL") == 0)

            let late = try await store.sessions.start(userID: user.id, deviceName: "Test device")
            store.advance(30 * 86_400 + 1)
            guard case .expired = try await store.sessions.rotate(late.token) else { Issue.record("expired token accepted"); return }

            let signedIn = try await store.sessions.start(userID: user.id, deviceName: "Test device")
            #expect(try await store.count("SELECT count(*) FROM refresh_tokens WHERE user_id = \(user.id)") == 1, "dead families are pruned")
            try await store.sessions.signOut(signedIn.token)
            guard case .revoked = try await store.sessions.rotate(signedIn.token) else { Issue.record("signed-out token accepted"); return }
            #expect(try await store.count("SELECT count(*) FROM refresh_tokens WHERE token_hash = \(RefreshTokenSecret.hash(signedIn.token))") == 1)
            #expect(try await store.count("SELECT count(*) FROM refresh_tokens WHERE token_hash = \(Data(signedIn.token.utf8))") == 0)
        }
    }

    @Test("a signed-out token is refused quietly; only a rotated token presented again is reuse, with a warning")
    func revokedIsNotReuse() async throws {
        try await withIdentityFixture { store in
            let lines = LockedValue<[String]>([])
            var logger = Logger(label: "sessions") { label in JSONLogHandler(label: label) { line in lines.withLock { $0.append(line) } } }
            logger.logLevel = .warning
            let sessions = Sessions(
                storage: IdentityStorage(client: store.client, outbox: store.storage.outbox, logger: logger), clock: store.clock,
                refreshTokenLifetime: 30 * 86_400, throttle: SignInThrottle())
            let user = try await store.guest("Sue")

            let first = try await sessions.start(userID: user.id, deviceName: "Test device")
            guard case .rotated(_, let second) = try await sessions.rotate(first.token) else { Issue.record("no rotation"); return }
            try await sessions.signOut(second.token)
            guard case .revoked = try await sessions.rotate(second.token) else { Issue.record("signed-out token not refused as revoked"); return }
            #expect(lines.value.isEmpty)
            guard case .reused = try await sessions.rotate(first.token) else { Issue.record("rotated token not reuse"); return }
            #expect(lines.value.count == 1)
            #expect(lines.value.first?.contains("Refresh token reused") == true)
        }
    }

    @Test("every revocation of a live session publishes SessionsRevoked with its family ids and reason, never a token; revoking nothing publishes nothing")
    func revocationEvents() async throws {
        try await withIdentityFixture { store in
            let type = SessionsRevoked.descriptor.type
            let user = try await store.guest("Rae")
            func session() async throws -> Sessions.IssuedRefreshToken {
                try await store.sessions.start(userID: user.id, deviceName: "Test device")
            }
            func expectLast(_ revoked: [Sessions.IssuedRefreshToken], _ reason: String) async throws {
                let payload = try await store.payloads(type).last ?? [:]
                #expect((payload["userID"] as? String)?.lowercased() == user.id.uuidString.lowercased())
                #expect(Set((payload["sessionIDs"] as? [String] ?? []).map { $0.lowercased() }) == Set(revoked.map { $0.familyID.uuidString.lowercased() }))
                #expect(payload["reason"] as? String == reason)
            }
            var tokens: [String] = []

            let ended = try await session()
            tokens.append(ended.token)
            #expect(try await store.sessions.end(ended.familyID, of: user.id, trace: store.trace))
            try await expectLast([ended], "session-ended")

            let (kept, other1, other2) = (try await session(), try await session(), try await session())
            tokens += [kept.token, other1.token, other2.token]
            #expect(try await store.sessions.endOthers(of: user.id, keeping: kept.token))
            try await expectLast([other1, other2], "other-sessions-ended")

            try await store.sessions.signOut(kept.token)
            try await expectLast([kept], "signed-out")
            let before = try await store.payloads(type).count
            try await store.sessions.signOut(kept.token)
            #expect(try await store.payloads(type).count == before, "an already revoked session is not announced again")

            let stolen = try await session()
            guard case .rotated(_, let next) = try await store.sessions.rotate(stolen.token) else { Issue.record("no rotation"); return }
            tokens += [stolen.token, next.token]
            guard case .reused = try await store.sessions.rotate(stolen.token) else { Issue.record("no reuse"); return }
            try await expectLast([stolen], "refresh-token-reused")

            let (a, b) = (try await session(), try await session())
            tokens += [a.token, b.token]
            try await store.accounts.changePassword(user.id, passwordHash: "hash", trace: store.trace)
            try await expectLast([a, b], "password-changed")
            let count = try await store.payloads(type).count
            try await store.accounts.changePassword(user.id, passwordHash: "hash", trace: store.trace)
            #expect(try await store.payloads(type).count == count, "no live session, nothing announced")
            #expect(count == 5)

            for token in tokens {
                #expect(try await store.count("SELECT count(*) FROM outbox WHERE payload::text LIKE \("%" + token + "%")") == 0)
            }
        }
    }

    @Test("dead refresh-token families are pruned for users who never come back; live ones stay")
    func pruning() async throws {
        try await withIdentityFixture { store in
            let (gone, staying) = (try await store.guest("Gone"), try await store.guest("Staying"))
            let old = try await store.sessions.start(userID: gone.id, deviceName: "Test device")
            _ = try await store.sessions.rotate(old.token)
            store.advance(20 * 86_400)
            let live = try await store.sessions.start(userID: staying.id, deviceName: "Test device")
            store.advance(11 * 86_400)
            #expect(try await store.sessions.pruneDeadFamilies() == 2)
            #expect(try await store.count("SELECT count(*) FROM refresh_tokens WHERE user_id = \(gone.id)") == 0)
            guard case .rotated = try await store.sessions.rotate(live.token) else { Issue.record("live family pruned"); return }
            #expect(try await store.sessions.pruneDeadFamilies() == 0)
        }
    }

    @Test("sign-in throttling counts failures per (e-mail, source) in the database: the attacker's source waits, the owner's signs in")
    func throttling() async throws {
        try await withIdentityFixture { store in
            let (attacker, owner) = (SignInSource(address: "198.51.100.66"), SignInSource(address: "2001:db8:0:1::7"))
            for _ in 0..<5 {
                #expect(try await store.sessions.admitAttempt(email: "victim@example.com", source: attacker) == .admitted)
                store.advance(10)
            }
            guard case .refused(let retryAfter, .pair) = try await store.sessions.admitAttempt(email: "victim@example.com", source: attacker) else {
                Issue.record("not throttled"); return
            }
            // A minute from the 5th failure, 10 s ago; the simulated clock keeps running in real time between steps.
            #expect((40...50) ~= retryAfter)
            // The owner from another address, and the attacker against another e-mail, are let through.
            #expect(try await store.sessions.admitAttempt(email: "victim@example.com", source: owner) == .admitted)
            try await store.sessions.succeeded(email: "victim@example.com", source: owner)
            #expect(try await store.sessions.admitAttempt(email: "other@example.com", source: attacker) == .admitted)
            // The owner's success forgot her own pair only.
            #expect(try await store.count("SELECT count(*) FROM sign_in_failures WHERE email = 'victim@example.com' AND source = '2001:db8:0:1::/64'") == 0)
            #expect(try await store.count("SELECT count(*) FROM sign_in_failures WHERE email = 'victim@example.com' AND source = '198.51.100.66'") == 5)
            // After the wait one more try; its failure doubles the wait.
            store.advance(Double(retryAfter))
            #expect(try await store.sessions.admitAttempt(email: "victim@example.com", source: attacker) == .admitted)
            guard case .refused(let doubled, .pair) = try await store.sessions.admitAttempt(email: "victim@example.com", source: attacker) else {
                Issue.record("not throttled again"); return
            }
            #expect((110...120) ~= doubled)
            // Failures older than a day go with the hourly pruning; a rolling upgrade's sourceless failures are the unknown source's.
            try await store.client.query(
                "INSERT INTO sign_in_failures (id, email, failed_at) VALUES (\(UUID()), 'old@example.com', \(store.clock.now()))", logger: .test("t"))
            #expect(try await store.count("SELECT count(*) FROM sign_in_failures WHERE source = ''") == 1)
            #expect(try await store.sessions.pruneSignInFailures() == 0)
            store.advance(86_400 + 60)
            #expect(try await store.sessions.pruneSignInFailures() == 8)
        }
    }

    @Test("a source failing against 20 e-mails within 15 minutes is refused for any e-mail, across store instances (replicas)")
    func sprayAcrossReplicas() async throws {
        try await withIdentityFixture { store in
            let replica = Sessions(
                storage: IdentityStorage(client: store.client, outbox: store.storage.outbox, logger: .test("replica")), clock: store.clock,
                refreshTokenLifetime: 86_400, throttle: SignInThrottle())
            let sprayer = SignInSource(address: "192.0.2.99")
            for index in 0..<20 {
                let sessions = index.isMultiple(of: 2) ? store.sessions : replica
                #expect(try await sessions.admitAttempt(email: "user\(index)@example.com", source: sprayer) == .admitted)
            }
            guard case .refused(let retryAfter, .source) = try await replica.admitAttempt(email: "new@example.com", source: sprayer) else {
                Issue.record("spray not stopped"); return
            }
            // 15 minutes from the first failure, less the time the 20 attempts took (the simulated clock runs on).
            #expect((840...900) ~= retryAfter)
            #expect(try await store.sessions.admitAttempt(email: "new@example.com", source: SignInSource(address: "192.0.2.100")) == .admitted)
            // Concurrent attempts from one source cannot squeeze past the limit together.
            let other = SignInSource(address: "192.0.2.150")
            let outcomes = try await withThrowingTaskGroup(of: Sessions.AttemptAdmission.self) { group in
                for index in 0..<30 {
                    group.addTask { try await (index.isMultiple(of: 2) ? store.sessions : replica).admitAttempt(email: "c\(index)@example.com", source: other) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .admitted }.count == 20)
        }
    }

    @Test("without JWT_SIGNING_KEY the development key is created once, race-free, and a token issued before a restart verifies against the JWKS after it")
    func developmentSigningKey() async throws {
        try await withIdentityFixture { store in
            let logger = Logger.test("signing-keys")
            let development = EnvironmentReader(["ACCESS_TOKEN_TTL_SECONDS": "600"])
            // Two replicas starting at once on an empty table, each with its own connection pool: one key for both.
            let other = store.database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            let (first, second) = try await PostgresClient.withRunning(other) { other in
                async let first = TokenSettings.from(development, environment: .test)
                    .issuer(developmentKey: SigningKeyStore(client: store.client, logger: logger).developmentKey)
                async let second = TokenSettings.from(development, environment: .development)
                    .issuer(developmentKey: SigningKeyStore(client: other, logger: logger).developmentKey)
                return try await (first, second)
            }
            #expect(first.signingKey.id == second.signingKey.id)
            #expect(first.signingKey.seed == second.signingKey.seed)
            #expect(first.signingKey.id.hasPrefix("dev-"))
            #expect(try await store.count("SELECT count(*) FROM development_signing_key") == 1)

            let userID = UUID()
            let token = try await first.issue(userID: userID, kind: "guest")

            // "Restart": a new connection pool and a new issuer over the same database, then the gateway's verifier
            // fed the JWKS it serves.
            let restarted = store.database.configuration(for: "identity").makeClient(schema: "identity", logger: logger)
            let jwks = try await PostgresClient.withRunning(restarted) { restarted in
                let issuer = try await TokenSettings.from(development, environment: .test)
                    .issuer(developmentKey: SigningKeyStore(client: restarted, logger: logger).developmentKey)
                return String(decoding: try JSONEncoder().encode(issuer.jwks), as: UTF8.self)
            }
            let verifier = AccessTokenVerifier(logger: logger) { jwks }
            let claims = try await verifier.verify(token.token)
            #expect(claims.userID == userID)
            #expect(try await store.count("SELECT count(*) FROM development_signing_key") == 1)

            // A configured key wins and the stored one is not even read; production insists on a configured key.
            let configured = try SigningKey.generate(id: "primary-2")
            let fromEnvironment = try await TokenSettings.from(
                EnvironmentReader(["JWT_SIGNING_KEY": configured.seed, "JWT_SIGNING_KEY_ID": configured.id]), environment: .production
            ).issuer { Issue.record("read the development key"); return first.signingKey }
            #expect(fromEnvironment.signingKey.id == "primary-2")
            #expect(fromEnvironment.signingKey.seed == configured.seed)
            #expect(throws: ConfigurationError.self) { _ = try TokenSettings.from(EnvironmentReader([:]), environment: .production) }
        }
    }

    @Test("friend requests: one pending per pair, accept makes friends, remove ends it; strangers cannot act on a request")
    func friendships() async throws {
        try await withIdentityFixture { store in
            let (ann, bob, eve) = (try await store.guest("Ann"), try await store.guest("Bob"), try await store.guest("Eve"))
            let request = try await store.friends.send(from: ann.id, to: bob.id, trace: store.trace)
            #expect(await problem { _ = try await store.friends.send(from: bob.id, to: ann.id, trace: store.trace) }?.slug == "friend-request-exists")
            #expect(await problem { _ = try await store.friends.send(from: ann.id, to: ann.id, trace: store.trace) }?.slug == "validation")
            #expect(await problem { _ = try await store.friends.send(from: ann.id, to: UUID(), trace: store.trace) }?.slug == "not-found")
            #expect(await problem { _ = try await store.friends.accept(request.id, by: eve.id, trace: store.trace) }?.slug == "not-found")
            #expect(await problem { _ = try await store.friends.accept(request.id, by: ann.id, trace: store.trace) }?.slug == "not-found")
            #expect(await problem { try await store.friends.close(request.id, by: bob.id, as: .cancelled, trace: store.trace) }?.slug == "not-found")

            let page = PageRequest<SequencePosition>(limit: 10, after: nil)
            #expect(try await store.friends.requests(of: bob.id, direction: .incoming, page: page).items.map(\.id) == [request.id])
            #expect(try await store.friends.requests(of: bob.id, direction: .outgoing, page: page).items.isEmpty)
            #expect(try await store.friends.requests(of: ann.id, direction: .outgoing, page: page).items.map(\.id) == [request.id])

            let friend = try await store.friends.accept(request.id, by: bob.id, trace: store.trace)
            #expect(friend.user.id == ann.id)
            #expect(await problem { _ = try await store.friends.send(from: bob.id, to: ann.id, trace: store.trace) }?.slug == "already-friends")
            let names = PageRequest<NamePosition>(limit: 10, after: nil)
            #expect(try await store.friends.friends(of: ann.id, page: names).items.map(\.user.id) == [bob.id])
            #expect(try await store.friends.friends(of: bob.id, page: names).items.map(\.user.id) == [ann.id])
            #expect(try await store.friends.friends(of: eve.id, page: names).items.isEmpty)

            #expect(await problem { try await store.friends.remove(friend: ann.id, of: eve.id, trace: store.trace) }?.slug == "not-found")
            try await store.friends.remove(friend: ann.id, of: bob.id, trace: store.trace)
            #expect(try await store.friends.friends(of: ann.id, page: names).items.isEmpty)
            let statuses = try await store.payloads(FriendshipChanged.descriptor.type).map { $0["status"] as? String }
            #expect(statuses == ["requested", "accepted", "removed"])
            let removed = try #require(try await store.payloads(FriendshipChanged.descriptor.type).last)
            #expect(removed["requesterID"] as? String == ann.id.key)
            #expect(removed["actorID"] as? String == bob.id.key)
        }
    }

    @Test("groups: invites expire and can be revoked; the owner leaving hands over to the longest-standing member; the last one deletes it")
    func groups() async throws {
        try await withIdentityFixture { store in
            let (olga, pete, quinn, rob) = (try await store.guest("Olga"), try await store.guest("Pete"), try await store.guest("Quinn"), try await store.guest("Rob"))
            let house = try await store.groups.create(try GroupCreation(name: "Flat 4", kind: .household, timeZone: "Europe/Rome"), owner: olga.id, trace: store.trace)
            let invite = try await store.groups.createInvite(house.id, by: olga.id, expiresInHours: 1)
            #expect(invite.link == "https://join.example/\(invite.code)")
            #expect(await problem { _ = try await store.groups.createInvite(house.id, by: rob.id, expiresInHours: nil) }?.slug == "not-found")
            _ = try await store.groups.join(code: invite.code, userID: pete.id, trace: store.trace)
            store.advance(60)
            let joined = try await store.groups.join(code: invite.code, userID: quinn.id, trace: store.trace)
            #expect(joined.memberCount == 3)
            #expect(joined.myRole == .member)
            #expect(try await store.groups.join(code: invite.code, userID: quinn.id, trace: store.trace).memberCount == 3)

            store.advance(3600)
            #expect(await problem { _ = try await store.groups.join(code: invite.code, userID: rob.id, trace: store.trace) }?.slug == "invite-expired")
            let second = try await store.groups.createInvite(house.id, by: pete.id, expiresInHours: nil)
            #expect(await problem { try await store.groups.revokeInvite(second.code, of: house.id, by: quinn.id) }?.slug == "forbidden")
            try await store.groups.revokeInvite(second.code, of: house.id, by: olga.id)
            #expect(await problem { _ = try await store.groups.join(code: second.code, userID: rob.id, trace: store.trace) }?.slug == "not-found")
            #expect(try await store.groups.group(house.id, for: rob.id) == nil)

            #expect(await problem { _ = try await store.groups.update(house.id, try GroupUpdate(name: "Mine", timeZone: nil), by: pete.id, trace: store.trace) }?.slug == "owner-only")
            #expect(await problem { try await store.groups.remove(pete.id, from: house.id, by: quinn.id, trace: store.trace) }?.slug == "owner-only")
            #expect(await problem { try await store.groups.remove(olga.id, from: house.id, by: olga.id, trace: store.trace) }?.slug == "cannot-remove-self")

            try await store.groups.leave(house.id, userID: olga.id, trace: store.trace)
            let afterOwner = try #require(try await store.groups.group(house.id, for: pete.id))
            #expect(afterOwner.ownerID == pete.id)
            #expect(afterOwner.myRole == .owner)
            try await store.groups.remove(quinn.id, from: house.id, by: pete.id, trace: store.trace)
            try await store.groups.leave(house.id, userID: pete.id, trace: store.trace)
            #expect(try await store.count("SELECT count(*) FROM groups") == 0)
            #expect(try await store.count("SELECT count(*) FROM group_invites") == 0)

            let changes = try await store.payloads(GroupMembershipChanged.descriptor.type).map { "\($0["displayName"] ?? ""):\($0["change"] ?? ""):\($0["role"] ?? "")" }
            #expect(changes == [
                "Olga:joined:owner", "Pete:joined:member", "Quinn:joined:member", "Olga:left:owner", "Pete:roleChanged:owner",
                "Quinn:removed:member", "Pete:left:owner",
            ])
            let groupChanges = try await store.payloads(GroupChanged.descriptor.type)
            #expect(groupChanges.map { $0["created"] as? Bool } == [true, false])
            #expect(groupChanges.last?["ownerID"] as? String == pete.id.key)
        }
    }

    @Test("display-name search: case-insensitive, wildcards taken literally, paginated by name with a stable cursor")
    func search() async throws {
        try await withIdentityFixture { store in
            let me = try await store.guest("Sam Searcher")
            for name in ["sam a", "Sam B", "SAM c", "Samuel", "Pam", "100% Sam", "sam_d"] { _ = try await store.guest(name) }
            let first = try await store.accounts.search("sam", excluding: me.id, page: PageRequest(limit: 3, after: nil))
            #expect(first.items.map(\.displayName) == ["100% Sam", "sam a", "Sam B"])
            let cursor = try #require(first.nextCursor)
            let rest = try await store.accounts.search(
                "sam", excluding: me.id, page: PageRequest(limit: 10, after: Cursor.decode(NamePosition.self, from: cursor)))
            #expect(rest.items.map(\.displayName) == ["SAM c", "sam_d", "Samuel"])
            #expect(rest.nextCursor == nil)
            #expect(try await store.accounts.search("%", excluding: me.id, page: PageRequest(limit: 10, after: nil)).items.map(\.displayName) == ["100% Sam"])
            #expect(try await store.accounts.search("_", excluding: me.id, page: PageRequest(limit: 10, after: nil)).items.map(\.displayName) == ["sam_d"])
        }
    }

    @Test("name-sorted lists page one by one through names whose lowercase Swift and PostgreSQL disagree on, each name once")
    func namePagesWithUnicode() async throws {
        try await withIdentityFixture { store in
            let me = try await store.guest("Mia")
            // Swift lowercases "İ" to "i" plus a combining dot, PostgreSQL to "i"; "Io" sorts between the two.
            var everyone: [UUID] = []
            for name in ["İlkay", "Io", "Émile", "émile", "Zoë"] {
                let user = try await store.guest(name)
                everyone.append(user.id)
                let request = try await store.friends.send(from: user.id, to: me.id, trace: store.trace)
                _ = try await store.friends.accept(request.id, by: me.id, trace: store.trace)
            }

            func walk<Item>(_ fetch: (PageRequest<NamePosition>) async throws -> Page<Item>, id: (Item) -> UUID) async throws -> [UUID] {
                var seen: [UUID] = []
                var after: NamePosition?
                for _ in 0..<10 {
                    let page = try await fetch(PageRequest(limit: 1, after: after))
                    seen += page.items.map(id)
                    guard let cursor = page.nextCursor else { return seen }
                    after = try #require(Cursor.decode(NamePosition.self, from: cursor))
                }
                Issue.record("paging did not end")
                return seen
            }
            let friends = try await walk({ try await store.friends.friends(of: me.id, page: $0) }, id: \.user.id)
            #expect(friends.count == everyone.count)
            #expect(Set(friends) == Set(everyone))
            let withI = try await walk({ try await store.accounts.search("i", excluding: me.id, page: $0) }, id: \.id)
            #expect(withI.count == 4)
            #expect(Set(withI) == Set(everyone.prefix(4)))
            // The query is lowercased by PostgreSQL as well, the same way as the names.
            #expect(try await walk({ try await store.accounts.search("İLK", excluding: me.id, page: $0) }, id: \.id) == [everyone[0]])
        }
    }

    @Test("deleting an account: groups handed over or deleted, friendships and requests ended, rows gone, UserDeleted last")
    func deletion() async throws {
        try await withIdentityFixture { store in
            let (dora, ed, fay, gil) = (try await store.guest("Dora"), try await store.guest("Ed"), try await store.guest("Fay"), try await store.guest("Gil"))
            let shared = try await store.groups.create(try GroupCreation(name: "Team", kind: .team, timeZone: "UTC"), owner: dora.id, trace: store.trace)
            let invite = try await store.groups.createInvite(shared.id, by: dora.id, expiresInHours: nil)
            _ = try await store.groups.join(code: invite.code, userID: ed.id, trace: store.trace)
            let solo = try await store.groups.create(try GroupCreation(name: "Solo", kind: .friends, timeZone: "UTC"), owner: dora.id, trace: store.trace)
            let request = try await store.friends.send(from: dora.id, to: ed.id, trace: store.trace)
            _ = try await store.friends.accept(request.id, by: ed.id, trace: store.trace)
            _ = try await store.friends.send(from: dora.id, to: fay.id, trace: store.trace)
            _ = try await store.friends.send(from: gil.id, to: dora.id, trace: store.trace)
            _ = try await store.sessions.start(userID: dora.id, deviceName: "Test device")
            _ = try await store.accounts.savePreferences(dora.id, .defaults, trace: store.trace)
            _ = try await store.accounts.saveTrainingPlan(
                dora.id, try TrainingPlan(activityLevel: .beginner, maxPushUpsInOneSet: 5, daysPerWeek: 3, dailyGoal: nil, startingSeries: nil, recoverySeconds: nil),
                trace: store.trace)
            let before = try await store.events().count

            try await store.accounts.delete(dora.id, trace: store.trace)

            #expect(try await store.accounts.account(dora.id) == nil)
            for table in ["refresh_tokens", "preferences", "training_plans", "group_members", "friend_requests"] {
                #expect(try await store.count(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE \(table == "friend_requests" ? "requester_id" : "user_id") = '\(dora.id)'")) == 0, "\(table)")
            }
            #expect(try await store.count("SELECT count(*) FROM friendships WHERE friend_id = \(dora.id) OR user_id = \(dora.id)") == 0)
            #expect(try await store.count("SELECT count(*) FROM friend_requests") == 0)
            let teamNow = try #require(try await store.groups.group(shared.id, for: ed.id))
            #expect(teamNow.ownerID == ed.id)
            #expect(teamNow.memberCount == 1)
            #expect(try await store.count("SELECT count(*) FROM groups WHERE id = \(solo.id)") == 0)
            #expect(await problem { try await store.accounts.delete(dora.id, trace: store.trace) }?.slug == "account-deleted")

            let events = Array(try await store.events().dropFirst(before))
            #expect(events.last == UserDeleted.descriptor.type)
            #expect(events.filter { $0 == GroupMembershipChanged.descriptor.type }.count == 3)  // left Team, Ed becomes owner, left Solo
            #expect(events.filter { $0 == GroupChanged.descriptor.type }.count == 1)
            let friendships = try await store.payloads(FriendshipChanged.descriptor.type).suffix(3).map { $0["status"] as? String }
            #expect(Set(friendships.compactMap { $0 }) == ["removed", "cancelled", "declined"])
        }
    }

    @Test("the export holds the account, credentials metadata, preferences, plan, friends, requests, groups and sessions, never secrets")
    func export() async throws {
        try await withIdentityFixture { store in
            let registration = try PasswordRegistration(email: "hal@example.com", password: "a fine passphrase", displayName: "Hal", timeZone: "Asia/Tokyo", locale: nil)
            let hal = try await store.accounts.registerWithPassword(registration, passwordHash: "$2b$secret-hash", trace: store.trace)
            let ida = try await store.guest("Ida")
            let request = try await store.friends.send(from: ida.id, to: hal.id, trace: store.trace)
            _ = try await store.friends.accept(request.id, by: hal.id, trace: store.trace)
            _ = try await store.groups.create(try GroupCreation(name: "Home", kind: .household, timeZone: "Asia/Tokyo"), owner: hal.id, trace: store.trace)
            let session = try await store.sessions.start(userID: hal.id, deviceName: "Test device")
            let export = try #require(try await store.exports.export(hal.id))
            #expect(export.account.email == "hal@example.com")
            #expect(export.credentials.password != nil)
            #expect(export.friends.map(\.user.id) == [ida.id])
            #expect(export.groups.map(\.group.name) == ["Home"])
            #expect(export.sessions.count == 1)
            #expect(export.sessions.first?.id == session.familyID)
            #expect(export.trainingPlan == nil)
            let json = String(decoding: try SurgeJSON.encode(export), as: UTF8.self)
            #expect(!json.contains("secret-hash"))
            #expect(!json.contains(session.token))
            #expect(try await store.exports.export(UUID()) == nil)
        }
    }
}
