import Foundation
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// The broken rules a domain check reports, as the API's validation problem names them (mapped as the service maps
/// them).
func fieldErrors(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> [FieldError] {
    do {
        try body()
        return []
    } catch let error as IdentityError {
        let problem = error.problem
        #expect(problem.type == Problem.typeBase + "validation", sourceLocation: sourceLocation)
        return problem.errors ?? []
    } catch {
        return [.init(field: "?", message: "\(error)")]
    }
}

@Suite("Identity: e-mail addresses", .tags(.unit), .kind(.unit))
struct EmailAddressTests {
    @Test("addresses are trimmed and lowercased")
    func normalisation() {
        #expect(EmailAddress("  Ann.Lee@Example.COM \n")?.value == "ann.lee@example.com")
        #expect(EmailAddress.normalise(" X@Y.Z ") == "x@y.z")
        #expect(EmailAddress("ann+tag@mail.example.org")?.localPart == "ann+tag")
    }

    @Test(
        "malformed addresses are refused",
        arguments: [
            "", "ann", "ann@", "@example.com", "ann@example", "ann@@example.com", "ann@exa mple.com", "an n@example.com", "ann@.example.com",
            "ann@example..com", ".ann@example.com", "ann.@example.com", "a..b@example.com", "ann@-example.com", "ann@example-.com",
            "ann@example.com@x.org", String(repeating: "a", count: 65) + "@example.com", "a@" + String(repeating: "b", count: 250) + ".com",
        ])
    func malformed(_ text: String) {
        #expect(EmailAddress(text) == nil, "\(text)")
    }

    @Test("well-formed addresses are accepted", arguments: ["a@b.co", "ann.lee+surge@mail.example.org", "x_y-z@sub-domain.example.io", "élodie@exemple.fr"])
    func wellFormed(_ text: String) {
        #expect(EmailAddress(text) != nil, "\(text)")
    }
}

@Suite("Identity: password rules", .tags(.unit), .kind(.unit))
struct PasswordPolicyTests {
    let email = EmailAddress("marcus@example.com")

    @Test("a good password breaks no rule")
    func good() {
        #expect(PasswordPolicy.violations("correct horse battery", email: email).isEmpty)
        #expect(PasswordPolicy.violations("Tr0ub4dor&3x", email: nil).isEmpty)
    }

    @Test("each rule is its own violation")
    func eachRule() {
        #expect(PasswordPolicy.violations("short1!", email: email) == [.tooShort])
        #expect(PasswordPolicy.violations("9 chars!!", email: email) == [.tooShort])
        #expect(PasswordPolicy.violations("ten chars!", email: email) == [])
        #expect(PasswordPolicy.violations(String(repeating: "ab", count: 128) + "c", email: email) == [.tooLong])
        #expect(PasswordPolicy.violations(String(repeating: "xy", count: 128), email: email) == [])
        // Characters, not bytes: 255 three-byte characters and an x are 766 bytes and allowed.
        #expect(PasswordPolicy.violations(String(repeating: "€", count: 255) + "x", email: email) == [])
        // Code points, as the schema counts them: an e and a combining accent are two.
        #expect(PasswordPolicy.violations("cafe\u{301}12345", email: email) == [])
        #expect(PasswordPolicy.violations("zzzzzzzzzzzz", email: email) == [.oneRepeatedCharacter])
        #expect(PasswordPolicy.violations("I am MARCUS and proud", email: email) == [.containsEmail])
        #expect(PasswordPolicy.violations("Password123", email: email) == [.common])
        #expect(PasswordPolicy.violations("qwertyuiop", email: nil) == [.common])
    }

    @Test("several broken rules are all reported, each as its own field error on password")
    func several() {
        #expect(PasswordPolicy.violations("aaaa", email: email) == [.tooShort, .oneRepeatedCharacter])
        let errors = PasswordPolicy.fieldErrors("marcus", email: email)
        #expect(errors.map(\.field) == ["password", "password"])
        #expect(errors.map(\.message) == [PasswordPolicy.Violation.tooShort.message, PasswordPolicy.Violation.containsEmail.message])
    }

    @Test("a short local part is no hint; without an e-mail the rule does not apply")
    func shortLocalPart() {
        #expect(PasswordPolicy.violations("alphabet soup", email: EmailAddress("al@example.com")).isEmpty)
        #expect(PasswordPolicy.violations("alphabet soup", email: EmailAddress("alp@example.com")) == [.containsEmail])
        #expect(PasswordPolicy.violations("marcus is here", email: nil).isEmpty)
    }

    @Test("a registration reports every broken field at once")
    func registration() {
        let errors = fieldErrors {
            _ = try PasswordRegistration(email: "nope", password: "short", displayName: " ", timeZone: "Mars/Olympus", locale: "not a tag")
        }
        #expect(Set(errors.map(\.field)) == ["email", "password", "displayName", "timeZone", "locale"])
        // The domain itself knows no problem documents: it throws its own error, which the API maps.
        #expect(throws: IdentityError.invalidFields(errors)) {
            _ = try PasswordRegistration(email: "nope", password: "short", displayName: " ", timeZone: "Mars/Olympus", locale: "not a tag")
        }
        let valid = try? PasswordRegistration(
            email: " Ann@Example.com ", password: "a fine passphrase", displayName: "  Ann ", timeZone: "Europe/Rome", locale: "it-IT")
        #expect(valid?.email.value == "ann@example.com")
        #expect(valid?.displayName == "Ann")
    }
}

@Suite("Identity: profile rules", .tags(.unit), .kind(.unit))
struct ProfileRulesTests {
    @Test("time zones must be IANA names")
    func timeZones() {
        #expect(fieldErrors { _ = try ProfileUpdate(displayName: nil, avatarURL: nil, timeZone: "America/New_York", locale: nil) }.isEmpty)
        for bad in ["CET", "GMT+2", "Europe/Atlantis", "", "europe/rome"] {
            #expect(fieldErrors { _ = try ProfileUpdate(displayName: nil, avatarURL: nil, timeZone: bad, locale: nil) }.map(\.field) == ["timeZone"], "\(bad)")
        }
    }

    @Test("display names are trimmed, 1-50 characters, no control characters")
    func displayNames() {
        var errors: [Problem.FieldError] = []
        #expect(ProfileRules.displayName("  Sam  ", errors: &errors) == "Sam")
        #expect(ProfileRules.displayName(String(repeating: "x", count: 50), errors: &errors) != nil)
        #expect(errors.isEmpty)
        #expect(ProfileRules.displayName(String(repeating: "x", count: 51), errors: &errors) == nil)
        #expect(ProfileRules.displayName("   ", errors: &errors) == nil)
        #expect(ProfileRules.displayName("bell\u{7}", errors: &errors) == nil)
        #expect(errors.count == 3)
    }

    @Test("avatar URLs must be https; an empty string removes the avatar")
    func avatars() throws {
        let set = try ProfileUpdate(displayName: nil, avatarURL: "https://cdn.example.com/a.png", timeZone: nil, locale: nil)
        #expect(set.avatarURL == .some("https://cdn.example.com/a.png"))
        let cleared = try ProfileUpdate(displayName: nil, avatarURL: "", timeZone: nil, locale: nil)
        #expect(cleared.avatarURL == .some(nil))
        let untouched = try ProfileUpdate(displayName: nil, avatarURL: nil, timeZone: nil, locale: nil)
        #expect(untouched.avatarURL == nil)
        for bad in ["http://example.com/a.png", "javascript:alert(1)", "https://", "not a url", "https://x.com/" + String(repeating: "a", count: 2100)] {
            #expect(fieldErrors { _ = try ProfileUpdate(displayName: nil, avatarURL: bad, timeZone: nil, locale: nil) }.map(\.field) == ["avatarURL"], "\(bad)")
        }
    }

    @Test("a profile update applies only the fields it names")
    func applied() throws {
        let account = Account(
            id: UUID(), displayName: "Sam", avatarURL: "https://a.example/x.png", timeZone: "UTC", locale: "en", kind: .guest, createdAt: Date())
        let update = try ProfileUpdate(displayName: "Samantha", avatarURL: "", timeZone: nil, locale: nil)
        let after = update.applied(to: account)
        #expect(after.displayName == "Samantha")
        #expect(after.avatarURL == nil)
        #expect(after.timeZone == "UTC")
        #expect(after.locale == "en")
    }

    @Test("locales are BCP 47 tags")
    func locales() {
        var errors: [Problem.FieldError] = []
        for good in ["en", "it-IT", "zh-Hant-TW", "es-419"] { #expect(ProfileRules.locale(good, errors: &errors) != nil, "\(good)") }
        #expect(errors.isEmpty)
        for bad in ["", "e", "english", "en_US", "en-", "en-toolongsubtag"] { #expect(ProfileRules.locale(bad, errors: &errors) == nil, "\(bad)") }
    }

    @Test("quiet hours that start and end at the same minute span no time: stored as none")
    func quietHours() throws {
        let nine = LocalTime(hour: 9, minute: 0)!
        let empty = try Preferences.validated(
            notificationsEnabled: true, dailyReminderTime: nil, quietHours: QuietHours(start: nine, end: nine), disabledCategories: [],
            telemetryOptOut: false)
        #expect(empty.quietHours == nil)
        let night = QuietHours(start: LocalTime(hour: 22, minute: 0)!, end: nine)
        let kept = try Preferences.validated(
            notificationsEnabled: true, dailyReminderTime: nil, quietHours: night, disabledCategories: [], telemetryOptOut: false)
        #expect(kept.quietHours == night)
        #expect(Preferences.defaults.telemetryOptOut == false)
        #expect(Preferences.defaults.notificationsEnabled)
        #expect(Preferences.defaults.disabledCategories.isEmpty, "every category on by default")
    }

    @Test("categories switched off are a set: a repeated one counts once, in one order, so equal choices compare equal")
    func disabledCategories() throws {
        func saved(_ categories: [NotificationCategory]) throws -> Preferences {
            try Preferences.validated(
                notificationsEnabled: true, dailyReminderTime: nil, quietHours: nil, disabledCategories: categories, telemetryOptOut: false)
        }
        #expect(try saved([.social, .reminders, .social]).disabledCategories == [.reminders, .social])
        #expect(try saved([.digest, .badges]) == saved([.badges, .digest, .badges]))
        #expect(try saved([]).disabledCategories.isEmpty)
        #expect(try saved(NotificationCategory.allCases.reversed()).disabledCategories == NotificationCategory.allCases)
    }
}

@Suite("Identity: onboarding recommendations", .tags(.unit), .kind(.unit))
struct RecommendationTests {
    @Test(
        "starting series by capacity: 0-9 → 1, 10-24 → 2, 25-49 → 5, 50+ → 10 (every band and boundary)",
        arguments: [(0, 1), (1, 1), (9, 1), (10, 2), (11, 2), (24, 2), (25, 5), (30, 5), (49, 5), (50, 10), (51, 10), (120, 10), (500, 10)])
    func startingSeries(_ capacity: Int, _ expected: Int) {
        #expect(TrainingRecommendation.startingSeries(maxPushUpsInOneSet: capacity) == expected)
    }

    @Test("recovery by activity level: 60, 45, 30 seconds")
    func recovery() {
        #expect(TrainingRecommendation.recoverySeconds(.beginner) == 60)
        #expect(TrainingRecommendation.recoverySeconds(.intermediate) == 45)
        #expect(TrainingRecommendation.recoverySeconds(.advanced) == 30)
    }

    @Test(
        "daily goal: 10 maximal sets a week over the training days, at most 3 a day, rounded to 5, within 5-1000",
        arguments: [
            // (capacity, days, goal)
            (0, 5, 5), (0, 1, 10), (3, 7, 5), (9, 3, 25), (10, 5, 20), (10, 7, 15), (20, 5, 40), (20, 7, 30), (20, 2, 60), (20, 1, 60),
            (24, 4, 60), (25, 5, 50), (30, 6, 50), (49, 5, 100), (50, 5, 100), (50, 7, 70), (50, 3, 150), (100, 5, 200), (500, 7, 715),
            (500, 1, 1000),
        ])
    func dailyGoal(_ capacity: Int, _ days: Int, _ expected: Int) {
        #expect(TrainingRecommendation.dailyGoal(maxPushUpsInOneSet: capacity, daysPerWeek: days) == expected)
    }

    @Test("the weekly volume stays near 10 × capacity whatever the frequency (when the daily cap does not bind)")
    func weeklyVolume() {
        for capacity in stride(from: 10, through: 200, by: 10) {
            for days in 4...7 {
                let weekly = TrainingRecommendation.dailyGoal(maxPushUpsInOneSet: capacity, daysPerWeek: days) * days
                #expect(abs(weekly - 10 * capacity) <= 3 * days, "capacity \(capacity), \(days) days: \(weekly)")
            }
        }
    }

    @Test("omitted values take the recommendation; given ones are kept")
    func plan() throws {
        let recommended = try TrainingPlan(
            activityLevel: .intermediate, maxPushUpsInOneSet: 30, daysPerWeek: 5, dailyGoal: nil, startingSeries: nil, recoverySeconds: nil)
        #expect(recommended.dailyGoal == 60)
        #expect(recommended.startingSeries == 5)
        #expect(recommended.recoverySeconds == 45)
        let custom = try TrainingPlan(
            activityLevel: .advanced, maxPushUpsInOneSet: 30, daysPerWeek: 5, dailyGoal: 100, startingSeries: 3, recoverySeconds: nil)
        #expect(custom.dailyGoal == 100)
        #expect(custom.startingSeries == 3)
        #expect(custom.recoverySeconds == 30)
        #expect(custom.recommendation == TrainingRecommendation(dailyGoal: 60, startingSeries: 5, recoverySeconds: 30))
    }

    @Test("answers out of range are refused, each on its field; the range edges are accepted")
    func validation() {
        let errors = fieldErrors {
            _ = try TrainingPlan(activityLevel: .beginner, maxPushUpsInOneSet: 501, daysPerWeek: 0, dailyGoal: 2001, startingSeries: 0, recoverySeconds: 1)
        }
        #expect(errors.map(\.field) == ["maxPushUpsInOneSet", "daysPerWeek", "dailyGoal", "startingSeries", "recoverySeconds"])
        #expect(fieldErrors { _ = try TrainingPlan(activityLevel: .beginner, maxPushUpsInOneSet: -1, daysPerWeek: 8, dailyGoal: 0, startingSeries: nil, recoverySeconds: nil) }.count == 3)
        #expect(fieldErrors { _ = try TrainingPlan(activityLevel: .beginner, maxPushUpsInOneSet: 0, daysPerWeek: 1, dailyGoal: 1, startingSeries: nil, recoverySeconds: nil) }.isEmpty)
        #expect(fieldErrors { _ = try TrainingPlan(activityLevel: .beginner, maxPushUpsInOneSet: 500, daysPerWeek: 7, dailyGoal: 2000, startingSeries: nil, recoverySeconds: nil) }.isEmpty)
    }
}

@Suite("Identity: sessions", .tags(.unit), .kind(.unit))
struct SessionDomainTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func token(usedAt: Date? = nil, revokedAt: Date? = nil, expiresIn: TimeInterval = 3600) -> StoredRefreshToken {
        StoredRefreshToken(
            id: UUID(), familyID: UUID(), userID: UUID(), issuedAt: now.addingTimeInterval(-60), expiresAt: now.addingTimeInterval(expiresIn),
            usedAt: usedAt, revokedAt: revokedAt)
    }

    @Test("refresh tokens are 32 random bytes in base64url, stored as SHA-256")
    func secrets() {
        let a = RefreshTokenSecret.generate()
        let b = RefreshTokenSecret.generate()
        #expect(a.token != b.token)
        #expect(a.token.count == 43)
        #expect(RefreshTokenSecret.isWellFormed(a.token))
        #expect(!a.token.contains("=") && !a.token.contains("+") && !a.token.contains("/"))
        #expect(a.hash.count == 32)
        #expect(RefreshTokenSecret.hash(a.token) == a.hash)
        #expect(a.hash != b.hash)
        #expect(!RefreshTokenSecret.isWellFormed("short"))
        #expect(!RefreshTokenSecret.isWellFormed(String(repeating: "+", count: 43)))
    }

    @Test("a current token rotates; a used one is reuse, even once revoked; a revoked or expired one just fails")
    func decisions() {
        #expect(RefreshTokenDecision.decide(token(), now: now) == .rotate)
        #expect(RefreshTokenDecision.decide(token(usedAt: now.addingTimeInterval(-1)), now: now) == .reused)
        #expect(RefreshTokenDecision.decide(token(usedAt: now.addingTimeInterval(-2), revokedAt: now.addingTimeInterval(-1)), now: now) == .reused)
        #expect(RefreshTokenDecision.decide(token(revokedAt: now.addingTimeInterval(-1)), now: now) == .revoked)
        #expect(RefreshTokenDecision.decide(token(revokedAt: now.addingTimeInterval(-1), expiresIn: -10), now: now) == .revoked)
        #expect(RefreshTokenDecision.decide(token(expiresIn: 0), now: now) == .expired)
        #expect(RefreshTokenDecision.decide(token(expiresIn: -10), now: now) == .expired)
        // A rotated token stays evidence of reuse even after it expired.
        #expect(RefreshTokenDecision.decide(token(usedAt: now.addingTimeInterval(-100), expiresIn: -10), now: now) == .reused)
    }
}

@Suite("Identity: groups", .tags(.unit), .kind(.unit))
struct GroupDomainTests {
    @Test("invite codes: 10 characters from an unambiguous alphabet, random, normalised case- and dash-insensitively")
    func inviteCodes() {
        let codes = (0..<500).map { _ in InviteCode.generate() }
        #expect(Set(codes).count == codes.count)
        for code in codes {
            #expect(code.count == 10)
            #expect(code.allSatisfy { InviteCode.alphabet.contains($0) })
            #expect(InviteCode.normalise(code) == code)
        }
        #expect(!InviteCode.alphabet.contains("0") && !InviteCode.alphabet.contains("O") && !InviteCode.alphabet.contains("I") && !InviteCode.alphabet.contains("1"))
        #expect(InviteCode.normalise(" abcde-fghjk ") == "ABCDEFGHJK")
        #expect(InviteCode.normalise("ABCDEFGHJ") == nil)
        #expect(InviteCode.normalise("ABCDEFGHJKL") == nil)
        #expect(InviteCode.normalise("ABCDEFGHJ0") == nil)
        #expect(InviteCode.normalise("'; DROP TABLE") == nil)
    }

    @Test("invites expire after the requested hours (default 72, 1-720) and a revoked one is dead")
    func inviteExpiry() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try InvitePolicy.expiry(hours: nil, now: now) == now.addingTimeInterval(72 * 3600))
        #expect(try InvitePolicy.expiry(hours: 1, now: now) == now.addingTimeInterval(3600))
        #expect(try InvitePolicy.expiry(hours: 720, now: now) == now.addingTimeInterval(720 * 3600))
        #expect(fieldErrors { _ = try InvitePolicy.expiry(hours: 0, now: now) }.map(\.field) == ["expiresInHours"])
        #expect(fieldErrors { _ = try InvitePolicy.expiry(hours: 721, now: now) }.map(\.field) == ["expiresInHours"])
        let expiry = now.addingTimeInterval(60)
        #expect(InvitePolicy.state(expiresAt: expiry, revokedAt: nil, now: now) == .usable)
        #expect(InvitePolicy.state(expiresAt: expiry, revokedAt: nil, now: expiry) == .expired)
        #expect(InvitePolicy.state(expiresAt: expiry, revokedAt: now, now: now) == .revoked)
    }

    @Test("departures: a member just goes, an owner hands over to the longest-standing member, the last one deletes the group")
    func departures() {
        let (owner, early, late) = (UUID(), UUID(), UUID())
        let members = [
            Membership(userID: late, role: .member, sequence: 30), Membership(userID: owner, role: .owner, sequence: 10),
            Membership(userID: early, role: .member, sequence: 20),
        ]
        #expect(Departure.of(late, from: members) == .memberLeaves)
        #expect(Departure.of(owner, from: members) == .ownershipPasses(to: early))
        #expect(Departure.of(owner, from: [members[1]]) == .groupDeleted)
        #expect(Departure.of(early, from: [members[2]]) == .groupDeleted)
    }

    @Test("group names and time zones are validated together")
    func creation() {
        #expect(Set(fieldErrors { _ = try GroupCreation(name: " ", kind: .household, timeZone: "Nowhere") }.map(\.field)) == ["name", "timeZone"])
        #expect(fieldErrors { _ = try GroupCreation(name: String(repeating: "n", count: 61), kind: .team, timeZone: "UTC") }.map(\.field) == ["name"])
        #expect(fieldErrors { _ = try GroupUpdate(name: nil, timeZone: "Europe/Nowhere") }.map(\.field) == ["timeZone"])
    }
}

@Suite("Identity: social identities", .tags(.unit), .kind(.unit))
struct SocialIdentityTests {
    let configuration = SocialProviderConfiguration(provider: .google, jwksURL: "http://keys", clientIDs: ["app-1", "app-2"])
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func claims(iss: String = "https://accounts.google.com", aud: [String] = ["app-2"], exp: TimeInterval = 600, emailVerified: Bool = true) -> SocialClaims {
        SocialClaims(
            issuer: iss, audiences: aud, subject: "1234", expiresAt: now.addingTimeInterval(exp), email: "Ann@Example.com",
            emailVerified: emailVerified, name: "Ann")
    }

    @Test("issuer, audience and expiry are checked; the e-mail counts only when verified")
    func verification() throws {
        let identity = try SocialIdentity.verify(claims(), configuration: configuration, now: now)
        #expect(identity.subject == "1234")
        #expect(identity.verifiedEmail?.value == "ann@example.com")
        #expect(try SocialIdentity.verify(claims(iss: "accounts.google.com"), configuration: configuration, now: now).subject == "1234")
        #expect(try SocialIdentity.verify(claims(emailVerified: false), configuration: configuration, now: now).verifiedEmail == nil)
        #expect(throws: SocialIdentity.Rejection.wrongIssuer) { try SocialIdentity.verify(claims(iss: "https://appleid.apple.com"), configuration: configuration, now: now) }
        #expect(throws: SocialIdentity.Rejection.wrongAudience) { try SocialIdentity.verify(claims(aud: ["other-app"]), configuration: configuration, now: now) }
        #expect(throws: SocialIdentity.Rejection.expired) { try SocialIdentity.verify(claims(exp: -1), configuration: configuration, now: now) }
    }

    @Test("a new account's display name: the requested one, else the provider's, else the e-mail's name, else a neutral one")
    func displayName() {
        let full = SocialIdentity(provider: .apple, subject: "s", verifiedEmail: EmailAddress("zoe@example.com"), name: "Zoë")
        #expect(full.displayName(requested: "Z") == "Z")
        #expect(full.displayName(requested: nil) == "Zoë")
        #expect(SocialIdentity(provider: .apple, subject: "s", verifiedEmail: EmailAddress("zoe@example.com"), name: nil).displayName(requested: nil) == "zoe")
        #expect(SocialIdentity(provider: .apple, subject: "s", verifiedEmail: nil, name: nil).displayName(requested: nil) == "Surge user")
    }

    @Test("settings: client ids are comma-separated; a provider without any is off")
    func settings() {
        let reader = EnvironmentReader(["APPLE_CLIENT_IDS": "a.b.c, d.e.f ,", "GOOGLE_JWKS_URL": "http://127.0.0.1:1/keys"])
        let apple = SocialProviderConfiguration.from(reader, provider: .apple)
        #expect(apple.clientIDs == ["a.b.c", "d.e.f"])
        #expect(apple.jwksURL == "https://appleid.apple.com/auth/keys")
        let google = SocialProviderConfiguration.from(reader, provider: .google)
        #expect(!google.isEnabled)
        #expect(google.jwksURL == "http://127.0.0.1:1/keys")
    }
}
