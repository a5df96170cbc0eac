import Foundation

/// One thing wrong with a request, naming the field (a JSON path such as `tasks[0].target`, or a query parameter)
/// and what is wrong with it. Domain modules report their refusals with these; the API edge puts them in a problem
/// document's `errors` unchanged (`Problem.FieldError` is this type).
public struct FieldError: Codable, Sendable, Equatable {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

extension FieldError {
    /// One error for each of `parameters` (name or value) that contains U+0000, which PostgreSQL cannot store; sorted
    /// by name, the NUL shown as `\u0000`. Empty when there is none.
    public static func nulCharacters(in parameters: [String: String]) -> [FieldError] {
        parameters.filter { $0.key.unicodeScalars.contains("\u{0}") || $0.value.unicodeScalars.contains("\u{0}") }
            .map { $0.key.replacingOccurrences(of: "\u{0}", with: "\\u0000") }.sorted()
            .map { FieldError(field: $0, message: "must not contain NUL characters") }
    }
}
