import Foundation
import Hummingbird
import SurgeAPICatalogue
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Public API contract", .tags(.unit), .kind(.unit))
struct PublicAPITests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("docs/openapi.json and the gateway's route table match the services' declarations (run `make contracts`)")
    func generatedFilesAreCurrent() throws {
        for file in try PublicAPICatalogue.files() {
            let onDisk = try? Data(contentsOf: Self.root.appendingPathComponent(file.path))
            #expect(onDisk == file.contents, "\(file.path) is out of date: run `make contracts`")
        }
    }

    @Test("every operation in the OpenAPI document is routed by the gateway, and every gateway route is documented")
    func documentAndRoutesAgree() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(PublicAPI.openAPIDocument.utf8)) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var documented: Set<String> = []
        for (path, methods) in paths {
            for (method, operation) in methods {
                let service = (operation as? [String: Any])?["x-surge-service"] as? String ?? "?"
                documented.insert("\(method.uppercased()) \(path) -> \(service)")
            }
        }
        let routed = Set(PublicAPI.routes.map { "\($0.method.rawValue) \($0.path) -> \($0.upstream.rawValue)" })
        #expect(documented == routed)
        #expect(!routed.isEmpty)
    }

    @Test("the catalogue has every registry service, and each declares only operations routed to itself")
    func catalogueFollowsTheRegistry() {
        #expect(Set(PublicAPICatalogue.byService.keys) == Set(SurgeService.deployed), "add the service's `api` to PublicAPICatalogue.byService")
        for (service, operations) in PublicAPICatalogue.byService {
            for operation in operations { #expect(operation.service == service, "\(operation.id) is declared by \(service.rawValue)") }
        }
    }

    @Test("operation ids are unique and every path is versioned")
    func operationsAreWellFormed() {
        let operations = PublicAPICatalogue.operations
        #expect(Set(operations.map(\.id)).count == operations.count)
        #expect(Set(operations.map { "\($0.method) \($0.path)" }).count == operations.count)
        for operation in operations {
            #expect(operation.path.hasPrefix("/v1/"), "\(operation.path)")
        }
    }
}
