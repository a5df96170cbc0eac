import Foundation
import SurgeCalendar
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Progress: privacy and time-zone moves", .tags(.system), .kind(.system), .serialized)
struct ProgressSecuritySystemTests {
    @Test("another user's token reaches none of a user's attempts, check-ins, photos, history or household chores")
    func secondUserSeesNothing() async throws {
        try await ProgressStage.with("progress-privacy") { stage in
            try await stage.waitForDefinition(Fixtures.seventyFiveHard)
            let owner = try await stage.user("Owner", timeZone: "Europe/Paris")
            let stranger = try await stage.user("Stranger", timeZone: "Europe/Paris")
            let household = try await stage.household(owner: owner, members: [], timeZone: "Europe/Paris")
            try await stage.setClock(LocalDate("2026-11-16")!, "09:00", for: owner)
            let started = try await owner.http.post("/v1/attempts", json: ["challengeID": Fixtures.seventyFiveHard])
            let attemptID = try #require((started.json["attempt"] as? [String: Any])?["attemptID"] as? String)
            let log = try await owner.http.post("/v1/attempts/\(attemptID)/tasks/water/logs", json: ["quantity": 1.0])
            let logID = try #require(log.json["logID"] as? String)
            let photo = try await owner.http.send(.PUT, "/v1/attempts/\(attemptID)/tasks/progress-photo/photo", body: Fixtures.jpeg, contentType: "image/jpeg")
            let photoID = try #require(photo.json["photoID"] as? String)
            #expect(try await owner.http.get("/v1/photos/\(photoID)").body == Fixtures.jpeg)

            let probes: [(String, () async throws -> TestResponse)] = [
                ("get attempt", { try await stranger.http.get("/v1/attempts/\(attemptID)") }),
                ("tick", { try await stranger.http.put("/v1/attempts/\(attemptID)/tasks/diet", json: ["done": true]) }),
                ("log", { try await stranger.http.post("/v1/attempts/\(attemptID)/tasks/water/logs", json: ["quantity": 1.0]) }),
                ("remove log", { try await stranger.http.delete("/v1/attempts/\(attemptID)/logs/\(logID)") }),
                ("photo upload", { try await stranger.http.send(.PUT, "/v1/attempts/\(attemptID)/tasks/progress-photo/photo", body: Fixtures.jpeg, contentType: "image/jpeg") }),
                ("restart", { try await stranger.http.post("/v1/attempts/\(attemptID)/restart") }),
                ("abandon", { try await stranger.http.post("/v1/attempts/\(attemptID)/abandon") }),
                ("calendar", { try await stranger.http.get("/v1/attempts/\(attemptID)/calendar") }),
                ("history", { try await stranger.http.get("/v1/attempts/\(attemptID)/history") }),
                ("photos", { try await stranger.http.get("/v1/attempts/\(attemptID)/photos") }),
                ("photo", { try await stranger.http.get("/v1/photos/\(photoID)") }),
                ("chores", { try await stranger.http.get("/v1/groups/\(household)/chore-occurrences") }),
            ]
            for (name, probe) in probes {
                let response = try await probe()
                #expect(response.status == 404, "\(name): \(response.status) \(response.text)")
                #expect(!response.text.lowercased().contains(owner.id.key), "\(name) leaked the owner's id")
            }
            let mine = try await stranger.http.get("/v1/attempts")
            #expect((mine.json["items"] as? [Any])?.isEmpty == true)
            #expect(try await stranger.http.get("/v1/me/points").json["total"] as? Int == 0)
            let gallery = try await stranger.http.get("/v1/challenges/\(Fixtures.seventyFiveHard)/photos")
            #expect((gallery.json["items"] as? [Any])?.isEmpty == true, "a curated challenge's gallery shows strangers nothing of others")
            let unknownGallery = try await stranger.http.get("/v1/challenges/\(UUID())/photos")
            #expect(unknownGallery.status == 404, "a gallery of an unknown challenge is a 404, as the challenge is: \(unknownGallery.text)")
            let anonymous = try await stage.stack.http().get("/v1/attempts/\(attemptID)")
            #expect(anonymous.status == 401)
            #expect(try await owner.http.get("/v1/attempts/\(attemptID)").status == 200)
        }
    }

    @Test("moving west keeps the day open longer; moving east never closes it early")
    func timeZoneMoves() async throws {
        try await ProgressStage.with("progress-move") { stage in
            let traveller = try await stage.user("Traveller", timeZone: "Europe/Rome")
            let habit = try await stage.habit(for: traveller, graceMinutes: 0)
            let day = LocalDate("2026-11-18")!
            try await stage.setClock(day, "10:00", for: traveller)
            let started = try await traveller.http.post("/v1/attempts", json: ["challengeID": habit])
            let attemptID = try #require(UUID(uuidString: (started.json["attempt"] as? [String: Any])?["attemptID"] as? String ?? ""))
            func nextJudgement() async throws -> Date {
                try await stage.stack.database.withAdmin { client in
                    try await client.query("SELECT next_judgement_at FROM progress.attempts WHERE attempt_id = \(attemptID)", logger: .test("t"))
                        .collect().first!.decode(Date.self)
                }
            }
            let romeMidnight = traveller.calendar.end(of: day)
            #expect(try await nextJudgement() == romeMidnight)

            #expect(try await traveller.http.patch("/v1/me", json: ["timeZone": "America/New_York"]).status == 200)
            let newYorkMidnight = LocalCalendar(zoneNamed: "America/New_York")!.end(of: day)
            try await waitUntil("the open day ends at New York's midnight") { try await nextJudgement() == newYorkMidnight }

            #expect(try await traveller.http.patch("/v1/me", json: ["timeZone": "Asia/Tokyo"]).status == 200)
            try await waitUntil("progress learned of Tokyo") {
                try await stage.stack.database.count("SELECT count(*) FROM progress.members WHERE time_zone = 'Asia/Tokyo'") == 1
            }
            #expect(try await nextJudgement() == newYorkMidnight)
        }
    }
}
