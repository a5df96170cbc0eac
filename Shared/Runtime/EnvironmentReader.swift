import Foundation

/// Typed reads of environment variables with defaults, and one clear error per bad value.
public struct EnvironmentReader: Sendable {
    public let values: [String: String]

    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    public func string(_ name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    public func string(_ name: String, default fallback: String) -> String {
        string(name) ?? fallback
    }

    public func required(_ name: String) throws -> String {
        guard let value = string(name) else { throw ConfigurationError(variable: name, problem: "is required") }
        return value
    }

    public func int(_ name: String, default fallback: Int, range: ClosedRange<Int> = Int.min...Int.max) throws -> Int {
        guard let text = string(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError(variable: name, problem: "must be an integer in \(range.lowerBound)...\(range.upperBound), got \(text)")
        }
        return value
    }

    public func bool(_ name: String, default fallback: Bool) throws -> Bool {
        guard let text = string(name)?.lowercased() else { return fallback }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: name, problem: "must be true or false, got \(text)")
        }
    }

    public func milliseconds(_ name: String, default fallback: Int) throws -> Duration {
        .milliseconds(try int(name, default: fallback, range: 1...86_400_000))
    }

    public func oneOf<Value: RawRepresentable>(_ name: String, default fallback: Value) throws -> Value
    where Value.RawValue == String, Value: CaseIterable {
        guard let text = string(name) else { return fallback }
        guard let value = Value(rawValue: text.lowercased()) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(variable: name, problem: "must be one of \(allowed), got \(text)")
        }
        return value
    }
}

public struct ConfigurationError: Error, CustomStringConvertible {
    public let variable: String
    public let problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "configuration: \(variable) \(problem)" }
}
