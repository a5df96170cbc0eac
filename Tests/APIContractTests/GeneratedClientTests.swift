import Crypto
import Foundation
import SurgeTestSupport
import Testing

@Suite("Generated client", .tags(.unit), .kind(.unit))
struct GeneratedClientTests {
    static let client = TestEnvironment.repositoryRoot.appendingPathComponent("Tests/GeneratedClient")

    @Test("Tests/GeneratedClient was generated from the current docs/openapi.json (run `make client` and commit it)")
    func clientIsCurrent() throws {
        let document = try Data(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/openapi.json"))
        let digest = SHA256.hash(data: document).map { String(format: "%02x", $0) }.joined()
        let recorded = try String(contentsOf: Self.client.appendingPathComponent("openapi.json.sha256"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(recorded == digest, "docs/openapi.json changed since the client was generated: run `make client`")
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.client.appendingPathComponent("Generated").path)
        #expect(files.contains("Client.swift") && files.contains("Types.swift"), "\(files)")
    }
}
