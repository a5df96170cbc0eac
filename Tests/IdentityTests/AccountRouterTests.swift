import Foundation
import HTTPTypes
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import IdentityDomain
@testable import IdentityService

/// `AccountController` through identity's router: the caller's own profile, credentials, preferences, training plan,
/// deletion, export and the user search.
@Suite("Identity: account routes (PostgreSQL)", .tags(.integration), .kind(.integration), .serialized)
struct AccountRouterTests {
    static let plan = #"{"activityLevel":"beginner","maxPushUpsInOneSet":10,"daysPerWeek":3}"#

    @Test("a guest edits the profile, attaches credentials, saves preferences and a training plan, finds others, exports, and deletes the account")
    func ownAccount() async throws {
        try await withIdentityFixture { store in
            let (gus, ann) = (try await store.guest("Gus"), try await store.guest("Ann"))
            try await store.withRouter { client in
                let me = try await client.call(.get, "/v1/me", as: gus.id)
                #expect(me.status == .ok)
                let account = try me.decode(AccountResponse.self).user
                #expect(account.id == gus.id && account.displayName == "Gus" && account.kind == .guest)
                let renamed = try await client.call(.patch, "/v1/me", as: gus.id, json: #"{"displayName":"Gus Two","locale":"it"}"#)
                #expect(renamed.status == .ok)
                let profile = try renamed.decode(AccountResponse.self).user
                #expect(profile.displayName == "Gus Two" && profile.locale == "it" && profile.timeZone == gus.timeZone)

                let attached = try await client.call(
                    .post, "/v1/me/credentials", as: gus.id, json: #"{"email":"gus@example.com","password":"a fine passphrase"}"#)
                #expect(attached.status == .ok, "\(attached.text)")
                let upgraded = try attached.decode(AccountResponse.self).user
                #expect(upgraded.id == gus.id && upgraded.kind == .password && upgraded.email == "gus@example.com")

                let defaults = try await client.call(.get, "/v1/me/preferences", as: gus.id)
                #expect(defaults.status == .ok)
                #expect(try defaults.decode(PreferencesResponse.self).notificationsEnabled)
                let saved = try await client.call(
                    .put, "/v1/me/preferences", as: gus.id,
                    json: #"{"notificationsEnabled":false,"disabledCategories":["streaks","streaks"],"telemetryOptOut":true}"#)
                #expect(saved.status == .ok, "\(saved.text)")
                let preferences = try saved.decode(PreferencesResponse.self)
                #expect(!preferences.notificationsEnabled && preferences.disabledCategories == [.streaks] && preferences.telemetryOptOut)

                let noPlan = try await client.call(.get, "/v1/me/training-plan", as: gus.id)
                #expect(noPlan.status == .notFound && noPlan.problem == "training-plan-not-found")
                let preview = try await client.call(.post, "/v1/me/training-plan/preview", as: gus.id, json: Self.plan)
                #expect(preview.status == .ok, "\(preview.text)")
                #expect(try preview.decode(TrainingPlanResponse.self).updatedAt == nil)
                #expect(try await client.call(.get, "/v1/me/training-plan", as: gus.id).status == .notFound, "a preview saves nothing")
                let put = try await client.call(.put, "/v1/me/training-plan", as: gus.id, json: Self.plan)
                #expect(put.status == .ok)
                let plan = try await client.call(.get, "/v1/me/training-plan", as: gus.id)
                #expect(plan.status == .ok)
                #expect(try plan.decode(TrainingPlanResponse.self).daysPerWeek == 3)

                let search = try await client.call(.get, "/v1/users?q=an", as: gus.id)
                #expect(search.status == .ok)
                #expect(try search.decode(Page<PublicProfile>.self).items.map(\.id) == [ann.id])
                let oldSpelling = try await client.call(.get, "/v1/users?query=an", as: gus.id)
                #expect(try oldSpelling.decode(Page<PublicProfile>.self).items.map(\.id) == [ann.id], "the earlier name, still accepted")
                let export = try await client.call(.get, "/internal/export", as: gus.id)
                #expect(export.status == .ok)
                #expect(try export.decode(IdentityExport.self).account.email == "gus@example.com")

                for path in ["/v1/me", "/v1/me?confirm=false"] {
                    let unconfirmed = try await client.call(.delete, path, as: gus.id)
                    #expect(
                        unconfirmed.status == .unprocessableContent && unconfirmed.problem == "confirmation-required" && unconfirmed.fields == ["confirm"],
                        "\(path)")
                }
                let garbled = try await client.call(.delete, "/v1/me?confirm=yes", as: gus.id)
                #expect(garbled.status == .unprocessableContent && garbled.problem == "validation" && garbled.fields == ["confirm"])
                #expect(try await client.call(.delete, "/v1/me?confirm=true", as: gus.id).status == .noContent)
                let gone = try await client.call(.get, "/v1/me", as: gus.id)
                #expect(gone.status == .unauthorized && gone.problem == "account-deleted")
            }
        }
    }

    @Test("no caller is 401 and a deleted or unknown one 401 account-deleted; broken fields are 422 by name; taken credentials 409")
    func refusals() async throws {
        try await withIdentityFixture { store in
            let gus = try await store.guest("Gus")
            try await store.withRouter { client in
                for (method, path) in [(HTTPRequest.Method.get, "/v1/me"), (.get, "/v1/me/preferences"), (.get, "/v1/users?q=a"), (.get, "/internal/export")] {
                    let anonymous = try await client.call(method, path)
                    #expect(anonymous.status == .unauthorized && anonymous.problem == "unauthorized", "\(path)")
                }
                let stranger = try await client.call(.get, "/v1/me", as: UUID())
                #expect(stranger.status == .unauthorized && stranger.problem == "account-deleted")

                let profile = try await client.call(.patch, "/v1/me", as: gus.id, json: #"{"displayName":"","timeZone":"Mars/Base","locale":"!!"}"#)
                #expect(profile.status == .unprocessableContent && profile.fields == ["displayName", "locale", "timeZone"], "\(profile.text)")
                let preferences = try await client.call(.put, "/v1/me/preferences", as: gus.id, json: #"{"telemetryOptOut":true}"#)
                #expect(preferences.status == .unprocessableContent && preferences.fields == ["notificationsEnabled"], "\(preferences.text)")
                let plan = try await client.call(
                    .put, "/v1/me/training-plan", as: gus.id, json: #"{"activityLevel":"beginner","maxPushUpsInOneSet":900,"daysPerWeek":9}"#)
                #expect(plan.status == .unprocessableContent && plan.fields == ["daysPerWeek", "maxPushUpsInOneSet"], "\(plan.text)")
                let query = try await client.call(.get, "/v1/users?q=%20", as: gus.id)
                #expect(query.status == .unprocessableContent && query.fields == ["q"], "\(query.text)")
                let missing = try await client.call(.get, "/v1/users", as: gus.id)
                #expect(missing.status == .unprocessableContent && missing.fields == ["q"], "\(missing.text)")

                _ = try await client.register("ann@example.com", name: "Ann")
                let taken = try await client.call(
                    .post, "/v1/me/credentials", as: gus.id, json: #"{"email":"ann@example.com","password":"a fine passphrase"}"#)
                #expect(taken.status == .conflict && taken.problem == "email-taken", "\(taken.text)")
                let weak = try await client.call(.post, "/v1/me/credentials", as: gus.id, json: #"{"email":"gus@example.com","password":"short"}"#)
                #expect(weak.status == .unprocessableContent && weak.fields == ["password"])
                _ = try await client.call(.post, "/v1/me/credentials", as: gus.id, json: #"{"email":"gus@example.com","password":"a fine passphrase"}"#)
                let again = try await client.call(
                    .post, "/v1/me/credentials", as: gus.id, json: #"{"email":"gus2@example.com","password":"a fine passphrase"}"#)
                #expect(again.status == .conflict && again.problem == "credentials-exist")
            }
        }
    }
}
