import SurgeContracts
import SurgeRuntime

/// Public operations the gateway answers itself.
enum GatewayAPI {
    static let export = APIOperation(
        .get, "/v1/me/export", id: "exportMyData", service: .gateway,
        summary: "Everything Surge keeps about the caller, from every service, as one JSON document (GDPR access).",
        response: ExportController.ExportDocument.self)

    static let all = [export]
}

extension ExportController.ExportDocument: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["userID": .init(schema: .string(format: "uuid"))]
}
