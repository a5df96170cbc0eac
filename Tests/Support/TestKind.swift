// `swift build --static-swift-stdlib` (the production image's build) compiles this library too, and the static
// runtime has no Testing module: the test kinds exist only where tests can be built.
#if canImport(Testing)
import Foundation
import Testing

/// The three kinds of tests. Unit tests need nothing; integration tests need the PostgreSQL that `make test` starts
/// (or a broker, which the test process makes itself); system tests also need the built executables. A suite says
/// its kind with `.tags(.<kind>), .kind(.<kind>)`: the tag names it, the condition skips it, with the reason, where its
/// prerequisites are missing (a plain `swift test` on a machine without PostgreSQL) or where `SURGE_TEST_KINDS` (a
/// comma-separated list, default all; `make test-unit` etc. set it) leaves it out.
public enum TestKind: String, Sendable, CaseIterable {
    case unit, integration, system

    static var selected: Set<TestKind> {
        guard let text = TestEnvironment.variables["SURGE_TEST_KINDS"], !text.isEmpty else { return Set(allCases) }
        return Set(text.split(separator: ",").compactMap { TestKind(rawValue: $0.trimmingCharacters(in: .whitespaces)) })
    }

    static var hasDatabase: Bool { !(TestEnvironment.variables["SURGE_TEST_DATABASE_URL"] ?? "").isEmpty }

    static var hasExecutables: Bool {
        FileManager.default.isExecutableFile(atPath: TestEnvironment.binaries.appendingPathComponent("surge-gateway").path)
    }

    func isRunnable(needsDatabase: Bool) -> Bool {
        guard Self.selected.contains(self) else { return false }
        switch self {
        case .unit: return true
        case .integration: return !needsDatabase || Self.hasDatabase
        case .system: return Self.hasDatabase && Self.hasExecutables
        }
    }
}

extension Tag {
    @Tag public static var unit: Self
    @Tag public static var integration: Self
    @Tag public static var system: Self
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite only when its kind is selected and what it needs is there; otherwise skips it with the reason.
    public static func kind(_ kind: TestKind, needsDatabase: Bool = true) -> Self {
        let reason = "\(kind.rawValue) tests run when SURGE_TEST_KINDS includes them (default: all)"
            + (kind == .unit ? "" : " and the PostgreSQL `make test` starts is there (SURGE_TEST_DATABASE_URL)")
            + (kind == .system ? " and the executables are built (swift build)" : "") + ": run `make test`"
        return .enabled(if: kind.isRunnable(needsDatabase: needsDatabase), Comment(rawValue: reason))
    }
}
#endif
