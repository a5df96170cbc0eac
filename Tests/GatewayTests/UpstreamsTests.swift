import GatewayDomain
import Hummingbird
import HummingbirdTesting
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: upstream replicas", .tags(.unit), .kind(.unit))
struct UpstreamsTests {
    @Test("a list of replicas: trimmed, trailing slash dropped; an empty list or a non-http entry is refused")
    func parsing() throws {
        let set = try #require(ReplicaSet(list: " http://a:8083/, https://b:8083 ,,"))
        #expect(set.urls == ["http://a:8083", "https://b:8083"])
        #expect(ReplicaSet(list: "") == nil)
        #expect(ReplicaSet(list: " , ") == nil)
        #expect(ReplicaSet(list: "http://a:8083,b:8083") == nil)
    }

    @Test("requests go round-robin; a replica that refused goes last until its quarantine ends, then rejoins its turn")
    func rotation() throws {
        var set = try #require(ReplicaSet(list: "http://a,http://b,http://c"))
        let now = ContinuousClock.now
        #expect(set.order(at: now) == ["http://a", "http://b", "http://c"])
        #expect(set.order(at: now) == ["http://b", "http://c", "http://a"])
        #expect(set.order(at: now) == ["http://c", "http://a", "http://b"])
        set.refused("http://a", at: now, quarantine: .seconds(5))
        #expect(set.order(at: now + .seconds(1)) == ["http://b", "http://c", "http://a"])
        #expect(set.order(at: now + .seconds(1)) == ["http://b", "http://c", "http://a"])
        #expect(set.order(at: now + .seconds(1)) == ["http://c", "http://b", "http://a"])
        #expect(set.order(at: now + .seconds(5)) == ["http://a", "http://b", "http://c"])
        set.refused("http://nowhere", at: now, quarantine: .seconds(5))
        #expect(set.order(at: now + .seconds(5)) == ["http://b", "http://c", "http://a"])
    }

    static func replica(_ name: String) -> some ApplicationProtocol {
        let router = Router()
        router.get("/who") { _, _ in name }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test("with one replica refusing connections, every request is answered by the others, spread between them")
    func failover() async throws {
        try await withUpstreamClient { client in
            try await Self.replica("a").test(.live) { a in
                try await Self.replica("b").test(.live) { b in
                    let urls = ["http://127.0.0.1:1", "http://127.0.0.1:\(try #require(a.port))", "http://127.0.0.1:\(try #require(b.port))"]
                    let upstreams = Upstreams(
                        try Upstreams.replicas(from: EnvironmentReader(["UPSTREAM_PROGRESS_URL": urls.joined(separator: ",")])), client: client)
                    var answers: [String: Int] = [:]
                    for _ in 0..<12 {
                        let response = try await upstreams.execute(.init(target: "/who"), to: .progress, timeout: .seconds(5))
                        #expect(response.status == .ok)
                        answers[String(buffer: try await response.body.collect(upTo: 1024)), default: 0] += 1
                    }
                    #expect(answers.keys.sorted() == ["a", "b"])
                    #expect(answers.values.allSatisfy { $0 >= 4 }, "\(answers)")
                }
            }
            let none = Upstreams(try Upstreams.replicas(from: EnvironmentReader(["UPSTREAM_PROGRESS_URL": "http://127.0.0.1:1"])), client: client)
            await #expect(throws: (any Error).self) {
                try await none.execute(.init(target: "/who"), to: .progress, timeout: .seconds(5))
            }
        }
    }

    @Test("a replica list that is not URLs stops the gateway at start, naming the variable")
    func badSetting() {
        let refused = #expect(throws: ConfigurationError.self) { try GatewaySettings.from(EnvironmentReader(["UPSTREAM_BADGES_URL": "badges:8085"])) }
        #expect(refused?.variable == "UPSTREAM_BADGES_URL")
        let badPort = #expect(throws: ConfigurationError.self) {
            try GatewaySettings.from(EnvironmentReader(["UPSTREAM_BADGES_URL": "http://badges:80850"]))
        }
        #expect(badPort?.variable == "UPSTREAM_BADGES_URL")
    }
}
