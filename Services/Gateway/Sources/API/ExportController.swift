import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import SurgeContracts
import SurgeRuntime

/// The data export: asks every service for what it keeps about the caller (`GET /internal/export`) and returns it as
/// one document. If any service cannot answer, the export fails rather than come back incomplete.
struct ExportController {
    let upstreams: Upstreams
    let signer: InternalCallSigner
    let now: @Sendable () -> Date

    struct ExportDocument: Codable, ResponseEncodable {
        var userID: String
        var exportedAt: Date
        var services: ServiceParts
    }

    /// Per service, by its name, the JSON object that service keeps about the user: a map with a schema of its own, so
    /// generated clients give it a name.
    struct ServiceParts: Codable, JSONSchemaDescribing {
        var byService: [String: JSONValue]

        init(_ byService: [String: JSONValue]) {
            self.byService = byService
        }

        init(from decoder: any Decoder) throws {
            byService = try decoder.singleValueContainer().decode([String: JSONValue].self)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(byService)
        }

        static var jsonSchema: JSONSchema { .map(.of(JSONValue.self)) }
        static var schemaPlaceholder: ServiceParts { ServiceParts([:]) }
    }

    func export(request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let callerID = context.callerID else { throw Problem.unauthorized() }
        let parts = try await withThrowingTaskGroup(of: (SurgeService, JSONValue?).self) { group in
            for service in SurgeService.exporting {
                group.addTask { (service, try await fetch(service, callerID: callerID, context: context)) }
            }
            var parts: [String: JSONValue] = [:]
            for try await (service, part) in group {
                if let part { parts[service.rawValue] = part }
            }
            return parts
        }
        let document = ExportDocument(userID: callerID.key, exportedAt: now(), services: ServiceParts(parts))
        var response = try context.responseEncoder.encode(document, from: request, context: context)
        response.headers[.contentDisposition] = "attachment; filename=\"surge-export-\(callerID.key).json\""
        return response
    }

    /// A service's part; nil when the service keeps nothing per user (answers 404).
    private func fetch(_ service: SurgeService, callerID: UUID, context: GatewayRequestContext) async throws -> JSONValue? {
        var request = UpstreamClient.Request(target: "/internal/export")
        signer.sign(&request.headers, target: "/internal/export", caller: callerID, requestID: context.requestID)
        do {
            let response = try await upstreams.execute(request, to: service, timeout: .seconds(30))
            if response.status == .notFound { return nil }
            guard response.status == .ok else { throw Problem.unavailable("The \(service.rawValue) service could not export right now.") }
            let body = try await response.body.collect(upTo: 64 << 20)
            return try SurgeJSON.decode(JSONValue.self, from: Data(buffer: body))
        } catch let problem as Problem {
            throw problem
        } catch {
            context.logger.warning("Export part failed", metadata: ["service": "\(service.rawValue)", "error": "\(error)"])
            throw Problem.unavailable("The \(service.rawValue) service could not export right now.")
        }
    }
}
