import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import SurgeContracts
import Synchronization

/// Decodes request bodies as Surge JSON, strictly: the body must be JSON, no string (key or value) may contain U+0000
/// (PostgreSQL cannot store it in text or jsonb), fields the type does not know are refused, and every decoding failure
/// becomes a problem that names the field.
public struct StrictJSONDecoder: RequestDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        if let contentType = request.headers[.contentType]?.lowercased(),
            !(contentType.hasPrefix("application/json") || contentType.contains("+json"))
        {
            throw Problem(
                slug: "unsupported-media-type", title: "Unsupported media type", status: .unsupportedMediaType,
                detail: "Send the body as application/json.")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch let error where (error as? HTTPError)?.status == .contentTooLarge || error is NIOTooManyBytesError {
            // The second from a body read as a sequence (checked against the signed digest as it arrives).
            throw Problem.tooLarge(limit: context.maxUploadSize)
        }
        return try Self.decode(type, from: Data(buffer: buffer))
    }

    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw Problem.malformedBody(data.isEmpty ? "The request needs a JSON body." : "The body is not valid JSON.")
        }
        let withNUL = stringsWithNUL(in: json, path: "")
        if !withNUL.isEmpty {
            throw Problem.invalidCharacters(withNUL.map { .init(field: $0, message: "must not contain NUL characters") })
        }
        if let schema = RequestSchemaCache.shared.schema(for: type) {
            let unknown = unknownFields(in: json, schema: schema, path: "")
            if !unknown.isEmpty {
                throw Problem.validation(unknown.map { .init(field: $0, message: "is not a known field") })
            }
        }
        // No request field takes null (the document declares none nullable): an optional field is left out, never
        // null, so `{"timeZone": null}` cannot pass for "unchanged" or "none" by accident.
        let nulls = nullFields(in: json, path: "")
        if !nulls.isEmpty {
            throw Problem.validation(nulls.map { .init(field: $0, message: "must not be null; leave the field out instead") })
        }
        do {
            return try SurgeJSON.decoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw Problem.validation([fieldError(for: error)])
        }
    }

    static func fieldError(for error: DecodingError) -> Problem.FieldError {
        switch error {
        case .keyNotFound(let key, let context):
            return .init(field: path(context.codingPath + [key]), message: "is required")
        case .valueNotFound(_, let context):
            return .init(field: path(context.codingPath), message: "must not be null")
        case .typeMismatch(let type, let context):
            return .init(field: path(context.codingPath), message: "must be \(jsonTypeName(type))")
        case .dataCorrupted(let context):
            return .init(field: path(context.codingPath), message: context.debugDescription)
        @unknown default:
            return .init(field: "", message: "is invalid")
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "body" : text
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int32.Type, is Int64.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type, is Decimal.Type: "a number"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }

    /// The paths of every key or string value containing U+0000, in key order. A key containing it is named by its
    /// own path, with the character written as `\u0000`.
    static func stringsWithNUL(in json: Any, path: String) -> [String] {
        switch json {
        case let text as String:
            return text.unicodeScalars.contains("\u{0}") ? [path.isEmpty ? "body" : path] : []
        case let object as [String: Any]:
            return object.sorted(by: { $0.key < $1.key }).flatMap { key, value in
                let name = key.replacingOccurrences(of: "\u{0}", with: "\\u0000")
                let fieldPath = path.isEmpty ? name : "\(path).\(name)"
                return (name == key ? [] : [fieldPath]) + stringsWithNUL(in: value, path: fieldPath)
            }
        case let array as [Any]:
            return array.enumerated().flatMap { stringsWithNUL(in: $1, path: "\(path)[\($0)]") }
        default:
            return []
        }
    }

    /// The paths of every member or element that is null, in key order.
    static func nullFields(in json: Any, path: String) -> [String] {
        switch json {
        case is NSNull:
            return path.isEmpty ? [] : [path]
        case let object as [String: Any]:
            return object.sorted(by: { $0.key < $1.key }).flatMap { nullFields(in: $1, path: path.isEmpty ? $0 : "\(path).\($0)") }
        case let array as [Any]:
            return array.enumerated().flatMap { nullFields(in: $1, path: "\(path)[\($0)]") }
        default:
            return []
        }
    }

    static func unknownFields(in json: Any, schema: JSONSchema, path: String) -> [String] {
        switch (schema, json) {
        case (.object(let properties), let object as [String: Any]):
            var unknown: [String] = []
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                let fieldPath = path.isEmpty ? key : "\(path).\(key)"
                guard let property = properties.first(where: { $0.name == key }) else {
                    unknown.append(fieldPath)
                    continue
                }
                unknown += unknownFields(in: value, schema: property.schema, path: fieldPath)
            }
            return unknown
        case (.array(let items), let array as [Any]):
            return array.enumerated().flatMap { unknownFields(in: $1, schema: items, path: "\(path)[\($0)]") }
        case (.map(let values), let object as [String: Any]):
            return object.flatMap { unknownFields(in: $1, schema: values, path: path.isEmpty ? $0 : "\(path).\($0)") }
        default:
            return []
        }
    }
}

/// Derived request schemas, computed once per type. Types the recorder cannot describe skip the unknown-field check.
final class RequestSchemaCache: Sendable {
    static let shared = RequestSchemaCache()
    private let schemas = Mutex<[ObjectIdentifier: JSONSchema?]>([:])

    func schema<T: Decodable>(for type: T.Type) -> JSONSchema? {
        let key = ObjectIdentifier(type)
        if let cached = schemas.withLock({ $0[key] }) { return cached }
        let schema = try? JSONSchema.derived(from: type)
        schemas.withLock { $0[key] = .some(schema) }
        return schema
    }
}
