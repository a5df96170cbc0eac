import Foundation
import NIOHTTP1
import PostgresNIO
import SurgeContracts
import SurgeTestSupport
import Testing

/// Identity end to end: every call goes through the gateway to identity, each running as its own process.
@Suite("Identity: end to end through the gateway", .tags(.system), .kind(.system), .serialized)
struct IdentitySystemTests {
    @Test("sign-up, sign-in, refresh, refresh-token reuse, sign-out, per-account throttling; the new user reaches progress")
    func accountsAndSessions() async throws {
        try await withTestStack("identity-sessions") { stack in
            let system = try await IdentityStack.start(stack, services: ["progress"])
            let http = system.http

            let ann = try await system.register("  Ann.Lee@Example.COM ", name: "Ann")
            #expect(ann.kind == "password")
            #expect(ann.email == "ann.lee@example.com")
            let annID = try #require(UUID(uuidString: ann.userID))
            try await waitUntil("progress learned about Ann") {
                try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(annID)") == 1
            }

            let duplicate = try await http.post(
                "/v1/auth/register", json: ["email": "ANN.LEE@example.com", "password": "another fine one", "displayName": "A", "timeZone": "UTC"])
            expectProblem(duplicate, 409, "email-taken")
            let weak = try await http.post(
                "/v1/auth/register", json: ["email": "bobby@example.com", "password": "bobby", "displayName": "Bob", "timeZone": "UTC"])
            expectProblem(weak, 422, "validation")
            #expect(problemFields(weak) == ["password", "password"])
            let messages = ((weak.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["message"] as? String }
            #expect(messages.contains { $0.contains("at least 10") })
            #expect(messages.contains { $0.contains("e-mail") })

            // Sign-in: the e-mail is normalised; a wrong password and an unknown e-mail look the same.
            let signedIn = try TestSession(try await system.signIn("ann.lee@EXAMPLE.com"))
            #expect(signedIn.userID == ann.userID)
            let wrong = try await system.signIn("ann.lee@example.com", password: "not my password")
            let unknown = try await system.signIn("nobody@example.com", password: "not my password")
            expectProblem(wrong, 401, "invalid-credentials")
            expectProblem(unknown, 401, "invalid-credentials")
            #expect(wrong.json["detail"] as? String == unknown.json["detail"] as? String)

            // Refresh rotates; replaying a rotated token signs out its whole family, but not Ann's other session. The
            // family's newest token then is merely invalid: it was never used.
            let refreshed = try await http.post("/v1/auth/refresh", json: ["refreshToken": signedIn.refreshToken])
            #expect(refreshed.status == 200, "\(refreshed.text)")
            let next = try TestSession(refreshed)
            #expect(next.refreshToken != signedIn.refreshToken)
            #expect(try await system.client(next).get("/v1/me").status == 200)
            expectProblem(try await http.post("/v1/auth/refresh", json: ["refreshToken": signedIn.refreshToken]), 401, "refresh-token-reused")
            expectProblem(try await http.post("/v1/auth/refresh", json: ["refreshToken": next.refreshToken]), 401, "invalid-refresh-token")
            expectProblem(try await http.post("/v1/auth/refresh", json: ["refreshToken": "made-up"]), 401, "invalid-refresh-token")
            let otherDevice = try TestSession(try await http.post("/v1/auth/refresh", json: ["refreshToken": ann.refreshToken]))

            // Sign-out revokes the device's family: its current token is invalid, not reused; a rotated one of the
            // family presented again still is reuse. Unknown tokens are ignored.
            #expect(try await http.post("/v1/auth/sign-out", json: ["refreshToken": otherDevice.refreshToken]).status == 204)
            expectProblem(try await http.post("/v1/auth/refresh", json: ["refreshToken": otherDevice.refreshToken]), 401, "invalid-refresh-token")
            expectProblem(try await http.post("/v1/auth/refresh", json: ["refreshToken": ann.refreshToken]), 401, "refresh-token-reused")
            #expect(try await http.post("/v1/auth/sign-out", json: ["refreshToken": "whatever"]).status == 204)

            // Four more failures make five within 15 minutes: the next attempt is refused, even with the right password.
            for _ in 0..<4 { expectProblem(try await system.signIn("ann.lee@example.com", password: "guess again!"), 401, "invalid-credentials") }
            let throttled = try await system.signIn("ann.lee@example.com")
            expectProblem(throttled, 429, "sign-in-throttled")
            let retryAfter = try #require(throttled.header("Retry-After").flatMap(Int.init))
            #expect((1...900).contains(retryAfter))
            let carl = try await system.register("carl@example.com", name: "Carl")
            #expect(try TestSession(try await system.signIn("carl@example.com")).userID == carl.userID)
            try await system.setClock(try await system.identityNow().addingTimeInterval(Double(retryAfter) + 1))
            let afterWindow = try await system.signIn("ann.lee@example.com")
            #expect(afterWindow.status == 200, "\(afterWindow.text)")
        }
    }

    @Test("guest upgrade keeps everything; profile and time-zone changes; preferences with immediate telemetry opt-out")
    func guestsProfilesPreferences() async throws {
        try await withTestStack("identity-profile") { stack in
            let system = try await IdentityStack.start(stack)
            let http = system.http

            let gus = try await system.guest("Gus")
            #expect(gus.kind == "guest")
            let asGus = system.client(gus)
            #expect(try await asGus.put("/v1/me/training-plan", json: ["activityLevel": "beginner", "maxPushUpsInOneSet": 12, "daysPerWeek": 4]).status == 200)
            let house = try await asGus.post("/v1/groups", json: ["name": "Gus's house", "kind": "household", "timeZone": "Europe/Rome"])
            #expect(house.status == 201)
            let upgraded = try await asGus.post("/v1/me/credentials", json: ["email": "Gus@Example.com", "password": "quiet river stones"])
            #expect(upgraded.status == 200, "\(upgraded.text)")
            let upgradedUser = try #require(upgraded.json["user"] as? [String: Any])
            #expect(upgradedUser["id"] as? String == gus.userID)
            #expect(upgradedUser["kind"] as? String == "password")
            #expect(upgradedUser["email"] as? String == "gus@example.com")
            expectProblem(try await asGus.post("/v1/me/credentials", json: ["email": "gus2@example.com", "password": "quiet river stones"]), 409, "credentials-exist")
            let other = try await system.guest("Other")
            expectProblem(
                try await system.client(other).post("/v1/me/credentials", json: ["email": "gus@example.com", "password": "quiet river stones"]), 409,
                "email-taken")
            let weak = try await system.client(other).post("/v1/me/credentials", json: ["email": "other@example.com", "password": "1234567890"])
            expectProblem(weak, 422, "validation")
            #expect(problemFields(weak) == ["password"])

            let gusAgain = try TestSession(try await system.signIn("gus@example.com", password: "quiet river stones"))
            #expect(gusAgain.userID == gus.userID)
            let plan = try await system.client(gusAgain).get("/v1/me/training-plan")
            #expect(plan.json["maxPushUpsInOneSet"] as? Int == 12)
            #expect(items(try await system.client(gusAgain).get("/v1/groups")).map { $0["name"] as? String } == ["Gus's house"])
            #expect(try await system.events(UserUpgraded.descriptor.type).map { $0["userID"] as? String } == [gus.userID])

            // Profile and time zone.
            let ann = try await system.register("ann@example.com", name: "Ann", timeZone: "Europe/Rome")
            let asAnn = system.client(ann)
            let patched = try await asAnn.patch(
                "/v1/me", json: ["displayName": " Annie ", "timeZone": "America/New_York", "avatarURL": "https://cdn.example.com/ann.png", "locale": "en-US"])
            #expect(patched.status == 200, "\(patched.text)")
            let user = try #require(patched.json["user"] as? [String: Any])
            #expect(user["displayName"] as? String == "Annie")
            #expect(user["timeZone"] as? String == "America/New_York")
            #expect(user["avatarURL"] as? String == "https://cdn.example.com/ann.png")
            let badZone = try await asAnn.patch("/v1/me", json: ["timeZone": "Mars/Olympus_Mons"])
            expectProblem(badZone, 422, "validation")
            #expect(problemFields(badZone) == ["timeZone"])
            #expect(((try await asAnn.get("/v1/me")).json["user"] as? [String: Any])?["timeZone"] as? String == "America/New_York")
            let change = try #require(try await system.events(ProfileChanged.descriptor.type).last)
            #expect(change["timeZone"] as? String == "America/New_York")
            #expect(change["previousTimeZone"] as? String == "Europe/Rome")
            #expect(change["displayName"] as? String == "Annie")
            let cleared = try await asAnn.patch("/v1/me", json: ["avatarURL": ""])
            #expect((cleared.json["user"] as? [String: Any])?["avatarURL"] == nil)
            #expect(try await system.events(ProfileChanged.descriptor.type).count == 2)
            _ = try await asAnn.patch("/v1/me", json: ["displayName": "Annie"])
            #expect(try await system.events(ProfileChanged.descriptor.type).count == 2, "an unchanged profile emits nothing")

            // Two devices: the profile's tag answers 304 while unchanged; an edit made from a copy read before another
            // device's edit is refused (412), one made from the current copy applies.
            let tag = try #require(try await asAnn.get("/v1/me").header("ETag"))
            let unchanged = try await asAnn.get("/v1/me", headers: [("If-None-Match", tag)])
            #expect(unchanged.status == 304 && unchanged.body.isEmpty && unchanged.header("ETag") == tag)
            #expect(try await asAnn.patch("/v1/me", json: ["displayName": "Ann B"], headers: [("If-Match", tag)]).status == 200)
            let staleEdit = try await asAnn.patch("/v1/me", json: ["displayName": "Ann C"], headers: [("If-Match", tag)])
            expectProblem(staleEdit, 412, "precondition-failed")
            let current = try await asAnn.get("/v1/me")
            #expect((current.json["user"] as? [String: Any])?["displayName"] as? String == "Ann B")
            let currentTag = try #require(current.header("ETag"))
            #expect(currentTag != tag)
            #expect(try await asAnn.patch("/v1/me", json: ["displayName": "Annie"], headers: [("If-Match", currentTag)]).status == 200)

            // Preferences: defaults, then a full replacement that takes effect at once.
            let defaults = try await asAnn.get("/v1/me/preferences")
            #expect(defaults.json["notificationsEnabled"] as? Bool == true)
            #expect(defaults.json["telemetryOptOut"] as? Bool == false)
            #expect(defaults.json["updatedAt"] == nil)
            #expect(defaults.json["disabledCategories"] as? [String] == [], "every category on by default")
            let saved = try await asAnn.put(
                "/v1/me/preferences",
                json: [
                    "notificationsEnabled": true, "dailyReminderTime": "07:30", "quietHours": ["start": "22:00", "end": "07:00"],
                    "disabledCategories": ["social", "digest", "social"], "telemetryOptOut": true,
                ])
            #expect(saved.status == 200, "\(saved.text)")
            let read = try await asAnn.get("/v1/me/preferences")
            #expect(read.json["dailyReminderTime"] as? String == "07:30")
            #expect((read.json["quietHours"] as? [String: Any])?["start"] as? String == "22:00")
            #expect(read.json["disabledCategories"] as? [String] == ["social", "digest"], "a set, in the documented order")
            #expect(read.json["telemetryOptOut"] as? Bool == true)
            let preferencesEvent = try #require(try await system.events(PreferencesChanged.descriptor.type).last)
            #expect(preferencesEvent["telemetryOptOut"] as? Bool == true)
            #expect(preferencesEvent["disabledCategories"] as? [String] == ["social", "digest"])
            #expect(preferencesEvent["userID"] as? String == ann.userID)
            let unknownCategory = try await asAnn.put(
                "/v1/me/preferences", json: ["notificationsEnabled": true, "disabledCategories": ["spam"], "telemetryOptOut": false])
            expectProblem(unknownCategory, 422, "validation")
            let badTime = try await asAnn.put("/v1/me/preferences", json: ["notificationsEnabled": true, "dailyReminderTime": "25:00", "telemetryOptOut": false])
            expectProblem(badTime, 422, "validation")
            #expect(problemFields(badTime) == ["dailyReminderTime"])
            // Quiet hours from 18:00 to 18:00 span no time: saved as none. null is no value: the field is left out instead.
            let equal = try await asAnn.put(
                "/v1/me/preferences",
                json: ["notificationsEnabled": true, "quietHours": ["start": "18:00", "end": "18:00"], "telemetryOptOut": false])
            #expect(equal.status == 200, "\(equal.text)")
            #expect(equal.json["quietHours"] == nil, "\(equal.text)")
            let null = try await asAnn.send(
                .PUT, "/v1/me/preferences", body: Data(#"{"notificationsEnabled":true,"quietHours":null,"telemetryOptOut":false}"#.utf8))
            expectProblem(null, 422, "validation")
            #expect(problemFields(null) == ["quietHours"])
            let nullZone = try await asAnn.send(.PATCH, "/v1/me", body: Data(#"{"timeZone":null}"#.utf8))
            expectProblem(nullZone, 422, "validation")
            #expect(problemFields(nullZone) == ["timeZone"])
            _ = http
        }
    }

    @Test("onboarding: recommendations for every capacity band and level, preview without saving, save, edit")
    func onboarding() async throws {
        try await withTestStack("identity-onboarding") { stack in
            let system = try await IdentityStack.start(stack)
            let user = try await system.guest("Pia")
            let asPia = system.client(user)
            expectProblem(try await asPia.get("/v1/me/training-plan"), 404, "training-plan-not-found")

            for (capacity, series) in [(0, 1), (9, 1), (10, 2), (24, 2), (25, 5), (49, 5), (50, 10), (150, 10)] {
                let preview = try await asPia.post(
                    "/v1/me/training-plan/preview", json: ["activityLevel": "intermediate", "maxPushUpsInOneSet": capacity, "daysPerWeek": 5])
                #expect(preview.status == 200, "\(preview.text)")
                let recommendation = try #require(preview.json["recommendation"] as? [String: Any])
                #expect(recommendation["startingSeries"] as? Int == series, "capacity \(capacity)")
                #expect(recommendation["recoverySeconds"] as? Int == 45)
                #expect(preview.json["startingSeries"] as? Int == series)
                #expect(preview.json["updatedAt"] == nil)
            }
            for (level, seconds) in [("beginner", 60), ("intermediate", 45), ("advanced", 30)] {
                let preview = try await asPia.post("/v1/me/training-plan/preview", json: ["activityLevel": level, "maxPushUpsInOneSet": 20, "daysPerWeek": 5])
                #expect((preview.json["recommendation"] as? [String: Any])?["recoverySeconds"] as? Int == seconds)
            }
            for (days, goal) in [(5, 40), (7, 30), (2, 60)] {
                let preview = try await asPia.post("/v1/me/training-plan/preview", json: ["activityLevel": "beginner", "maxPushUpsInOneSet": 20, "daysPerWeek": days])
                #expect(preview.json["dailyGoal"] as? Int == goal, "\(days) days")
            }
            expectProblem(try await asPia.get("/v1/me/training-plan"), 404, "training-plan-not-found")
            #expect(try await system.events(TrainingPlanChanged.descriptor.type).isEmpty)

            let saved = try await asPia.put("/v1/me/training-plan", json: ["activityLevel": "advanced", "maxPushUpsInOneSet": 30, "daysPerWeek": 4])
            #expect(saved.status == 200, "\(saved.text)")
            #expect(saved.json["dailyGoal"] as? Int == 75)
            #expect(saved.json["startingSeries"] as? Int == 5)
            #expect(saved.json["recoverySeconds"] as? Int == 30)
            #expect(saved.json["updatedAt"] is String)

            let edited = try await asPia.put(
                "/v1/me/training-plan",
                json: ["activityLevel": "advanced", "maxPushUpsInOneSet": 30, "daysPerWeek": 4, "dailyGoal": 100, "startingSeries": 3, "recoverySeconds": 40])
            #expect(edited.json["dailyGoal"] as? Int == 100)
            let read = try await asPia.get("/v1/me/training-plan")
            #expect(read.json["dailyGoal"] as? Int == 100)
            #expect(read.json["startingSeries"] as? Int == 3)
            #expect(read.json["recoverySeconds"] as? Int == 40)
            #expect((read.json["recommendation"] as? [String: Any])?["dailyGoal"] as? Int == 75)
            let events = try await system.events(TrainingPlanChanged.descriptor.type)
            #expect(events.map { $0["dailyGoal"] as? Int } == [75, 100])

            let invalid = try await asPia.put(
                "/v1/me/training-plan", json: ["activityLevel": "beginner", "maxPushUpsInOneSet": 501, "daysPerWeek": 0, "dailyGoal": 2001])
            expectProblem(invalid, 422, "validation")
            #expect(problemFields(invalid) == ["maxPushUpsInOneSet", "daysPerWeek", "dailyGoal"])
            let level = try await asPia.put("/v1/me/training-plan", json: ["activityLevel": "elite", "maxPushUpsInOneSet": 5, "daysPerWeek": 3])
            expectProblem(level, 422, "validation")
            #expect(problemFields(level) == ["activityLevel"])
        }
    }

    @Test("friends: search by display name, send, decline, cancel, accept, list, remove; strangers cannot touch a request")
    func friends() async throws {
        try await withTestStack("identity-friends") { stack in
            let system = try await IdentityStack.start(stack)
            let ann = try await system.register("ann@example.com", name: "Ann")
            let bob = try await system.register("bob.builder@example.com", name: "Bob Builder")
            let cleo = try await system.guest("Cleo")
            let (asAnn, asBob, asCleo) = (system.client(ann), system.client(bob), system.client(cleo))

            let search = try await asAnn.get("/v1/users?q=BUILD")
            #expect(search.status == 200, "\(search.text)")
            #expect(items(search).map { $0["id"] as? String } == [bob.userID])
            #expect((items(search).first.map { Set($0.keys) } ?? []).isSubset(of: ["id", "displayName", "avatarURL"]))
            #expect(!search.text.contains("bob.builder@example.com"))
            _ = try await system.guest("Bobby Tables")
            let firstPage = try await asAnn.get("/v1/users?q=bob&limit=1")
            let cursor = try #require(firstPage.json["nextCursor"] as? String)
            let secondPage = try await asAnn.get("/v1/users?q=bob&limit=1&cursor=\(cursor)")
            #expect(items(firstPage).map { $0["displayName"] as? String } == ["Bob Builder"])
            #expect(items(secondPage).map { $0["displayName"] as? String } == ["Bobby Tables"])
            #expect(secondPage.json["nextCursor"] == nil)

            let first = try await asAnn.post("/v1/friend-requests", json: ["userID": bob.userID])
            #expect(first.status == 201, "\(first.text)")
            let firstID = try #require(first.json["id"] as? String)
            expectProblem(try await asBob.post("/v1/friend-requests", json: ["userID": ann.userID]), 409, "friend-request-exists")
            expectProblem(try await asAnn.post("/v1/friend-requests", json: ["userID": UUID().uuidString]), 404)
            #expect(items(try await asBob.get("/v1/friend-requests")).map { $0["id"] as? String } == [firstID])
            #expect(items(try await asAnn.get("/v1/friend-requests?direction=outgoing")).map { $0["id"] as? String } == [firstID])
            #expect(items(try await asAnn.get("/v1/friend-requests?direction=incoming")).isEmpty)
            expectProblem(try await asCleo.post("/v1/friend-requests/\(firstID)/accept"), 404)
            expectProblem(try await asAnn.post("/v1/friend-requests/\(firstID)/accept"), 404)
            expectProblem(try await asCleo.delete("/v1/friend-requests/\(firstID)"), 404)

            #expect(try await asBob.post("/v1/friend-requests/\(firstID)/decline").status == 204)
            #expect(items(try await asBob.get("/v1/friend-requests")).isEmpty)
            let second = try #require(try await asAnn.post("/v1/friend-requests", json: ["userID": bob.userID]).json["id"] as? String)
            #expect(try await asAnn.delete("/v1/friend-requests/\(second)").status == 204)
            let third = try #require(try await asAnn.post("/v1/friend-requests", json: ["userID": bob.userID]).json["id"] as? String)
            let accepted = try await asBob.post("/v1/friend-requests/\(third)/accept")
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect((accepted.json["user"] as? [String: Any])?["id"] as? String == ann.userID)

            #expect(items(try await asAnn.get("/v1/friends")).map { ($0["user"] as? [String: Any])?["id"] as? String } == [bob.userID])
            #expect(items(try await asBob.get("/v1/friends")).map { ($0["user"] as? [String: Any])?["id"] as? String } == [ann.userID])
            #expect(items(try await asCleo.get("/v1/friends")).isEmpty)
            expectProblem(try await asAnn.post("/v1/friend-requests", json: ["userID": bob.userID]), 409, "already-friends")
            expectProblem(try await asCleo.delete("/v1/friends/\(ann.userID)"), 404)
            #expect(try await asAnn.delete("/v1/friends/\(bob.userID)").status == 204)
            #expect(items(try await asBob.get("/v1/friends")).isEmpty)
            expectProblem(try await asAnn.delete("/v1/friends/\(bob.userID)"), 404)

            let statuses = try await system.events(FriendshipChanged.descriptor.type).map { $0["status"] as? String }
            #expect(statuses == ["requested", "declined", "requested", "cancelled", "requested", "accepted", "removed"])
        }
    }

    @Test("households: create, invite by code and link, join, roles, owner-only changes, revoke, expiry, remove, owner leaves, last leaves")
    func households() async throws {
        try await withTestStack("identity-groups") { stack in
            let system = try await IdentityStack.start(stack)
            let olga = try await system.register("olga@example.com", name: "Olga")
            let (pete, quinn, rob) = (try await system.guest("Pete"), try await system.guest("Quinn"), try await system.guest("Rob"))
            let (asOlga, asPete, asQuinn, asRob) = (system.client(olga), system.client(pete), system.client(quinn), system.client(rob))

            let created = try await asOlga.post("/v1/groups", json: ["name": "Flat 4", "kind": "household", "timeZone": "Europe/Rome"])
            #expect(created.status == 201, "\(created.text)")
            let groupID = try #require(created.json["id"] as? String)
            #expect(created.json["myRole"] as? String == "owner")
            #expect(created.json["memberCount"] as? Int == 1)

            let invite = try await asOlga.post("/v1/groups/\(groupID)/invites")
            #expect(invite.status == 201, "\(invite.text)")
            let code = try #require(invite.json["code"] as? String)
            let link = try #require(invite.json["link"] as? String)
            #expect(link.hasSuffix(code))
            let expiresAt = try #require((invite.json["expiresAt"] as? String).flatMap(Timestamp.parse))
            #expect(abs(expiresAt.timeIntervalSince(try await system.identityNow()) - 72 * 3600) < 60)

            // A code as a person types it: lower case, with a dash.
            let typed = code.lowercased().prefix(5) + "-" + code.lowercased().dropFirst(5)
            let joined = try await asPete.post("/v1/groups/join", json: ["code": String(typed)])
            #expect(joined.status == 200, "\(joined.text)")
            #expect(joined.json["id"] as? String == groupID)
            #expect(joined.json["myRole"] as? String == "member")
            #expect(joined.json["memberCount"] as? Int == 2)
            #expect(items(try await asPete.get("/v1/groups")).map { $0["id"] as? String } == [groupID])
            let members = items(try await asPete.get("/v1/groups/\(groupID)/members"))
            #expect(members.map { ($0["user"] as? [String: Any])?["id"] as? String } == [olga.userID, pete.userID])
            #expect(members.map { $0["role"] as? String } == ["owner", "member"])

            for path in ["/v1/groups/\(groupID)", "/v1/groups/\(groupID)/members", "/v1/groups/\(groupID)/invites"] {
                expectProblem(try await asRob.get(path), 404)
            }
            expectProblem(try await asRob.post("/v1/groups/\(groupID)/leave"), 404)

            expectProblem(try await asPete.patch("/v1/groups/\(groupID)", json: ["name": "Pete's"]), 403, "owner-only")
            let renamed = try await asOlga.patch("/v1/groups/\(groupID)", json: ["name": "Flat 4B", "timeZone": "Europe/London"])
            #expect(renamed.json["name"] as? String == "Flat 4B")
            #expect(renamed.json["timeZone"] as? String == "Europe/London")
            expectProblem(try await asOlga.patch("/v1/groups/\(groupID)", json: ["timeZone": "Europe/Atlantis"]), 422, "validation")

            #expect(items(try await asPete.get("/v1/groups/\(groupID)/invites")).map { $0["code"] as? String } == [code])
            #expect(try await asOlga.delete("/v1/groups/\(groupID)/invites/\(code)").status == 204)
            expectProblem(try await asQuinn.post("/v1/groups/join", json: ["code": code]), 404)
            #expect(items(try await asOlga.get("/v1/groups/\(groupID)/invites")).isEmpty)

            let shortLived = try #require(try await asOlga.post("/v1/groups/\(groupID)/invites", json: ["expiresInHours": 1]).json["code"] as? String)
            try await system.setClock(try await system.identityNow().addingTimeInterval(2 * 3600))
            expectProblem(try await asQuinn.post("/v1/groups/join", json: ["code": shortLived]), 410, "invite-expired")
            let fresh = try #require(try await asPete.post("/v1/groups/\(groupID)/invites", json: ["expiresInHours": 24]).json["code"] as? String)
            #expect(try await asQuinn.post("/v1/groups/join", json: ["code": fresh]).json["memberCount"] as? Int == 3)
            #expect(try await asQuinn.post("/v1/groups/join", json: ["code": fresh]).json["memberCount"] as? Int == 3)

            expectProblem(try await asPete.delete("/v1/groups/\(groupID)/members/\(quinn.userID)"), 403, "owner-only")
            #expect(try await asOlga.delete("/v1/groups/\(groupID)/members/\(quinn.userID)").status == 204)
            expectProblem(try await asQuinn.get("/v1/groups/\(groupID)"), 404)

            // The owner leaves: Pete, the longest-standing member, becomes the owner.
            #expect(try await asOlga.post("/v1/groups/\(groupID)/leave").status == 204)
            let afterOwner = try await asPete.get("/v1/groups/\(groupID)")
            #expect(afterOwner.json["ownerID"] as? String == pete.userID)
            #expect(afterOwner.json["myRole"] as? String == "owner")
            expectProblem(try await asOlga.get("/v1/groups/\(groupID)"), 404)
            // The last member leaves: the group is gone.
            #expect(try await asPete.post("/v1/groups/\(groupID)/leave").status == 204)
            expectProblem(try await asPete.get("/v1/groups/\(groupID)"), 404)
            #expect(try await stack.database.count("SELECT count(*) FROM identity.groups") == 0)

            let groupEvents = try await system.events(GroupChanged.descriptor.type)
            #expect(groupEvents.map { $0["created"] as? Bool } == [true, false, false])
            #expect(groupEvents.first?["kind"] as? String == "household")
            let memberships = try await system.events(GroupMembershipChanged.descriptor.type).map { "\($0["displayName"] ?? ""):\($0["change"] ?? ""):\($0["role"] ?? "")" }
            #expect(memberships == [
                "Olga:joined:owner", "Pete:joined:member", "Quinn:joined:member", "Quinn:removed:member", "Olga:left:owner", "Pete:roleChanged:owner",
                "Pete:left:owner",
            ])
        }
    }

    @Test("privacy: identity's export holds the user's data and no secrets; deletion needs confirmation, erases, and shuts every door")
    func exportAndDelete() async throws {
        try await withTestStack("identity-privacy") { stack in
            // Every service, so that the gateway's export (which asks each of them) can be checked too.
            let system = try await IdentityStack.start(
                stack, services: SurgeService.deployed.filter { $0.entry.exportsUserData && $0 != .identity }.map(\.rawValue))
            let dora = try await system.register("dora@example.com", name: "Dora", password: "my secret passphrase")
            let (ed, fay) = (try await system.guest("Ed"), try await system.guest("Fay"))
            let (asDora, asEd, asFay) = (system.client(dora), system.client(ed), system.client(fay))
            _ = try await asDora.put("/v1/me/preferences", json: ["notificationsEnabled": false, "telemetryOptOut": true])
            _ = try await asDora.put("/v1/me/training-plan", json: ["activityLevel": "beginner", "maxPushUpsInOneSet": 8, "daysPerWeek": 3])
            let request = try #require(try await asDora.post("/v1/friend-requests", json: ["userID": ed.userID]).json["id"] as? String)
            _ = try await asEd.post("/v1/friend-requests/\(request)/accept")
            _ = try await asFay.post("/v1/friend-requests", json: ["userID": dora.userID])
            let groupID = try #require(try await asDora.post("/v1/groups", json: ["name": "Dora's team", "kind": "team", "timeZone": "UTC"]).json["id"] as? String)
            let code = try #require(try await asDora.post("/v1/groups/\(groupID)/invites").json["code"] as? String)
            _ = try await asEd.post("/v1/groups/join", json: ["code": code])

            // The events reached progress: Dora's daily goal (beginner, 8 in a set, 3 days: 25) and the team's members.
            let doraID = try #require(UUID(uuidString: dora.userID))
            let edID = try #require(UUID(uuidString: ed.userID))
            let teamID = try #require(UUID(uuidString: groupID))
            try await waitUntil("progress learned Dora's goal and the team") {
                let goal = try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(doraID) AND daily_goal = 25")
                let members = try await stack.database.count("SELECT count(*) FROM progress.group_members WHERE group_id = \(teamID)")
                return goal == 1 && members == 2
            }

            let export = try await system.identity(as: dora.userID).get("/internal/export")
            #expect(export.status == 200, "\(export.text)")
            #expect((export.json["account"] as? [String: Any])?["email"] as? String == "dora@example.com")
            #expect(((export.json["credentials"] as? [String: Any])?["password"] as? [String: Any])?["createdAt"] is String)
            #expect((export.json["preferences"] as? [String: Any])?["telemetryOptOut"] as? Bool == true)
            #expect((export.json["trainingPlan"] as? [String: Any])?["startingSeries"] as? Int == 1)
            #expect(((export.json["friends"] as? [[String: Any]]) ?? []).count == 1)
            #expect((((export.json["friendRequests"] as? [String: Any])?["incoming"]) as? [[String: Any]])?.count == 1)
            #expect(((export.json["groups"] as? [[String: Any]]) ?? []).compactMap { ($0["group"] as? [String: Any])?["name"] as? String } == ["Dora's team"])
            #expect(((export.json["sessions"] as? [[String: Any]]) ?? []).count == 1)
            #expect(!export.text.contains("$2b$") && !export.text.contains(dora.refreshToken) && !export.text.lowercased().contains("hash"))
            expectProblem(try await system.identity.get("/internal/export"), 401, "unauthenticated-call")
            // A caller header without the gateway's signature is refused: nobody inside the network can pose as Dora.
            expectProblem(
                try await system.identity.get("/internal/export", headers: [("X-Surge-Caller", dora.userID)]), 401, "unauthenticated-call")
            expectProblem(try await system.http.authorized(dora.accessToken).get("/internal/export"), 404)
            // The gateway's export carries every service's part: identity's as is, and what challenges and progress
            // keep (a like, an attempt at 75 Hard).
            let seventyFiveHard = "c4a11e00-0075-4000-8000-000000000001"
            #expect(try await asDora.put("/v1/challenges/\(seventyFiveHard)/like", json: [:]).status < 300)
            _ = try await eventually("progress knows 75 Hard") { () -> Bool? in
                try await asDora.post("/v1/attempts", json: ["challengeID": seventyFiveHard]).status == 201 ? true : nil
            }
            let full = try await asDora.get("/v1/me/export")
            let parts = full.json["services"] as? [String: Any] ?? [:]
            #expect(((parts["challenges"] as? [String: Any])?["likes"] as? [[String: Any]])?.count == 1, "\(full.text)")
            #expect(((parts["progress"] as? [String: Any])?["attempts"] as? [[String: Any]])?.count == 1, "\(full.text)")
            #expect(full.status == 200, "\(full.text)")
            let identityPart = try #require((full.json["services"] as? [String: Any])?["identity"] as? [String: Any], "\(full.text)")
            #expect((identityPart["account"] as? [String: Any])?["email"] as? String == "dora@example.com")

            // Deletion needs ?confirm=true (the body {"confirm": ...} of earlier versions is still read).
            expectProblem(try await asDora.delete("/v1/me"), 422, "confirmation-required")
            expectProblem(try await asDora.delete("/v1/me?confirm=maybe"), 422, "validation")
            expectProblem(try await asDora.send(.DELETE, "/v1/me", body: Data(#"{"confirm": false}"#.utf8)), 422, "confirmation-required")
            expectProblem(try await asDora.send(.DELETE, "/v1/me", body: Data(#"{"confirm": "yes"}"#.utf8)), 422, "validation")
            #expect(try await asDora.get("/v1/me").status == 200)
            expectProblem(try await asDora.delete("/v1/me?confirm=false"), 422, "confirmation-required")
            let deleted = try await asDora.delete("/v1/me?confirm=true")
            #expect(deleted.status == 204, "\(deleted.text)")

            // The access token still verifies until it expires, but every identity route refuses it.
            for path in ["/v1/me", "/v1/me/preferences", "/v1/me/training-plan", "/v1/friends", "/v1/friend-requests", "/v1/groups", "/v1/users?q=Ed"] {
                expectProblem(try await asDora.get(path), 401, "account-deleted")
            }
            expectProblem(try await asDora.post("/v1/groups", json: ["name": "Ghost", "kind": "team", "timeZone": "UTC"]), 401, "account-deleted")
            expectProblem(try await system.http.post("/v1/auth/refresh", json: ["refreshToken": dora.refreshToken]), 401, "invalid-refresh-token")
            expectProblem(try await system.signIn("dora@example.com", password: "my secret passphrase"), 401, "invalid-credentials")
            expectProblem(try await system.identity(as: dora.userID).get("/internal/export"), 401, "account-deleted")

            // What others see: the friendship and request are gone; the team passed to Ed.
            #expect(items(try await asEd.get("/v1/friends")).isEmpty)
            #expect(items(try await asFay.get("/v1/friend-requests?direction=outgoing")).isEmpty)
            let team = try await asEd.get("/v1/groups/\(groupID)")
            #expect(team.json["ownerID"] as? String == ed.userID)
            #expect(team.json["memberCount"] as? Int == 1)
            for table in ["users", "refresh_tokens", "password_credentials", "preferences", "training_plans", "group_members"] {
                let column = table == "users" ? "id" : "user_id"
                #expect(try await stack.database.count(PostgresQuery(unsafeSQL: "SELECT count(*) FROM identity.\(table) WHERE \(column) = '\(doraID)'")) == 0)
            }

            let positions = try await stack.database.withAdmin { client in
                try await client.query("SELECT type FROM identity.outbox ORDER BY position", logger: .test("t")).collect().map { try $0.decode(String.self) }
            }
            #expect(positions.last == UserDeleted.descriptor.type)
            #expect(try await system.events(UserDeleted.descriptor.type).map { $0["userID"] as? String } == [dora.userID])
            // Progress honours the deletion; Ed stays in the team there too.
            try await waitUntil("progress erased Dora") {
                let member = try await stack.database.count("SELECT count(*) FROM progress.members WHERE user_id = \(doraID)")
                let team = try await stack.database.count("SELECT count(*) FROM progress.group_members WHERE group_id = \(teamID)")
                let ed = try await stack.database.count("SELECT count(*) FROM progress.group_members WHERE user_id = \(edID)")
                return member == 0 && team == 1 && ed == 1
            }
            // The address is free again.
            _ = try await system.register("dora@example.com", name: "Dora again")
        }
    }
}
