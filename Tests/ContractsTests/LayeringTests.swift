import Foundation
import SurgeTestSupport
import Testing

/// Each kind of code in its one place (docs/architecture.md, `Services/<Name>/`): SQL only in a service's `Storage/`
/// folders, and problem documents (`Problem`, an HTTP matter) never in a domain or its use cases, which throw errors of
/// their own that the API maps. Comment lines are not read.
@Suite("Layering", .tags(.unit), .kind(.unit))
struct LayeringTests {
    struct Line: CustomStringConvertible {
        var path: String
        var number: Int
        var text: String

        var description: String { "\(path):\(number): \(text.trimmingCharacters(in: .whitespaces))" }
    }

    /// The lines of every Swift file under `Services/`, comment lines aside, by the file's path from the repository root.
    static func serviceLines() throws -> [String: [Line]] {
        let services = TestEnvironment.repositoryRoot.appendingPathComponent("Services")
        var files: [String: [Line]] = [:]
        for relative in try FileManager.default.subpathsOfDirectory(atPath: services.path) where relative.hasSuffix(".swift") {
            let path = "Services/\(relative)"
            let text = try String(contentsOf: services.appendingPathComponent(relative), encoding: .utf8)
            files[path] = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
                line.trimmingCharacters(in: .whitespaces).hasPrefix("//") ? nil : Line(path: path, number: index + 1, text: String(line))
            }
        }
        return files
    }

    /// Every line `isSQL` accepts contains one of these; matching the regexes is slow, so a plain search passes over most
    /// lines first.
    static let sqlHints = [
        "SELECT", "INSERT INTO", "UPDATE ", "DELETE FROM", "TRUNCATE", "CREATE ", "ALTER TABLE", "DROP TABLE", "ON CONFLICT", "ANALYZE ",
        "LOCK TABLE", "BEGIN", "COMMIT", "ROLLBACK", "pg_", ".query(", "connection.",
    ]

    /// SQL text (statements written in upper case, as every statement here is), or a statement run on a connection or
    /// pool. HTTP clients' `execute` is not a statement, so only a connection's counts.
    static func isSQL(_ line: String) -> Bool {
        guard sqlHints.contains(where: { line.contains($0) }) else { return false }
        return line.contains(
            /\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|TRUNCATE|CREATE (TEMPORARY |TEMP |UNLOGGED )?(TABLE|INDEX)|ALTER TABLE|DROP TABLE|ON CONFLICT|ANALYZE \w+|LOCK TABLE)\b/
        ) || line.contains(/"(BEGIN|COMMIT|ROLLBACK)"|\bpg_\w+\(|\.query\(|connection\.(copy|execute)\(/)
    }

    /// `Problem` used as a type: thrown, built, caught, declared or named in a type.
    static func mentionsProblem(_ line: String) -> Bool {
        line.contains("Problem") && line.contains(/\bProblem(\.|\()|(:|->)\s*\[?Problem\b|throws\(Problem\)|\bas[?!]?\s+Problem\b/)
    }

    static func useCaseOrDomain(_ path: String) -> Bool { path.contains("/UseCases/") || path.contains("/Domain/") }

    /// The files under `UseCases/` or `Domain/` folders that use `Problem` as a type, with the lines that do.
    static func problemsInUseCasesAndDomains() throws -> [String: [Line]] {
        try serviceLines().filter { useCaseOrDomain($0.key) }.mapValues { lines in lines.filter { mentionsProblem($0.text) } }.filter { !$0.value.isEmpty }
    }

    @Test("the checks below tell SQL and Problem from what resembles them")
    func detectors() {
        #expect(Self.isSQL(#"let rows = try await client.query("SELECT count(*) FROM users", logger: logger)"#))
        #expect(Self.isSQL("        ON CONFLICT (user_id, key) DO NOTHING"))
        #expect(Self.isSQL(#"try await store.connection.execute("DELETE FROM tokens WHERE id = \(id)", logger: logger)"#))
        #expect(Self.isSQL(#"try await connection.query("BEGIN", logger: logger)"#))
        #expect(!Self.isSQL("let response = try await client.execute(request, timeout: .seconds(10))"))
        #expect(!Self.isSQL(#"let selected = request.uri.queryParameters.get("select")"#))
        #expect(Self.mentionsProblem(#"guard member else { throw Problem.notFound("No such group.") }"#))
        #expect(Self.mentionsProblem("var errors: [Problem.FieldError] = []"))
        #expect(Self.mentionsProblem("} catch let problem as Problem {"))
        #expect(Self.mentionsProblem("    var problem: Problem"))
        #expect(Self.mentionsProblem("func check() throws(Problem) {"))
        #expect(!Self.mentionsProblem("throw ChallengesError.notFound(challengeID)"))
        #expect(!Self.mentionsProblem("static func problem(_ error: IdentityProblem.Kind) -> String"))
    }

    @Test("SQL only in Storage/: move the statement into a store of the service's Sources/Storage/")
    func sqlOnlyInStorage() throws {
        let found = try Self.serviceLines().filter { !$0.key.contains("/Storage/") }.values.flatMap { lines in lines.filter { Self.isSQL($0.text) } }
        let listed = found.sorted { ($0.path, $0.number) < ($1.path, $1.number) }.map(\.description)
        #expect(listed.isEmpty, "SQL outside a Storage/ folder:\n\(listed.joined(separator: "\n"))")
    }

    @Test("no Problem in use cases or domains: throw a domain error, mapped to a problem document in the API (<Name>Problems)")
    func noProblemInUseCasesOrDomains() throws {
        let found = try Self.problemsInUseCasesAndDomains().values.flatMap { $0 }
        let listed = found.sorted { ($0.path, $0.number) < ($1.path, $1.number) }.map(\.description)
        #expect(listed.isEmpty, "Problem in a UseCases/ or Domain/ folder:\n\(listed.joined(separator: "\n"))")
    }
}
