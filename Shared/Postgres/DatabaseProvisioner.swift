import Foundation
import Logging
import PostgresNIO

/// Creates a service's login role and schema inside a database, allowing the role its own schema only. Run with
/// an administrator's connection (`surge-admin provision`); idempotent, so it is safe on every deploy.
public enum DatabaseProvisioner {
    public struct ServiceAccount: Sendable {
        public var role: String
        public var schema: String
        public var password: String

        public init(role: String, schema: String, password: String) {
            self.role = role
            self.schema = schema
            self.password = password
        }
    }

    public enum ProvisioningError: Error, CustomStringConvertible {
        case invalidIdentifier(String)

        public var description: String {
            switch self {
            case .invalidIdentifier(let name): "\(name) is not a valid role, schema or database name (use [a-z_][a-z0-9_]*)"
            }
        }
    }

    /// Creates the database unless it exists.
    public static func createDatabase(_ name: String, admin: PostgresClient, logger: Logger) async throws {
        let exists = try await admin.query("SELECT 1 FROM pg_database WHERE datname = \(name)", logger: logger).collect()
        guard exists.isEmpty else { return }
        do {
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(try identifier(name))"), logger: logger)
        } catch where error.isUniqueViolation || error.sqlState == "42P04" {
            // created concurrently
        }
    }

    public static func provision(_ accounts: [ServiceAccount], database: String, admin: PostgresClient, logger: Logger) async throws {
        let databaseName = try identifier(database)
        try await admin.query(PostgresQuery(unsafeSQL: "REVOKE ALL ON DATABASE \(databaseName) FROM PUBLIC"), logger: logger)
        try await admin.query("REVOKE ALL ON SCHEMA public FROM PUBLIC", logger: logger)
        for account in accounts {
            let role = try identifier(account.role)
            let schema = try identifier(account.schema)
            try await createOrUpdateRole(account.role, password: account.password, admin: admin, logger: logger)
            let statements = [
                "GRANT CONNECT, TEMPORARY ON DATABASE \(databaseName) TO \(role)",
                "CREATE SCHEMA IF NOT EXISTS \(schema) AUTHORIZATION \(role)",
                "ALTER SCHEMA \(schema) OWNER TO \(role)",
                "REVOKE ALL ON SCHEMA \(schema) FROM PUBLIC",
                "ALTER ROLE \(role) IN DATABASE \(databaseName) SET search_path = \(schema)",
            ]
            for statement in statements {
                try await admin.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            logger.info("Provisioned database role", metadata: ["role": "\(account.role)", "schema": "\(account.schema)"])
        }
    }

    /// Creates the login role, or sets its password if it exists (also when another provisioner created it meanwhile).
    static func createOrUpdateRole(_ name: String, password: String, admin: PostgresClient, logger: Logger) async throws {
        let role = try identifier(name)
        let alter = PostgresQuery(unsafeSQL: "ALTER ROLE \(role) LOGIN PASSWORD \(literal(password))")
        let exists = try await admin.query("SELECT 1 FROM pg_roles WHERE rolname = \(name)", logger: logger).collect()
        guard exists.isEmpty else {
            try await admin.query(alter, logger: logger)
            return
        }
        do {
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN PASSWORD \(literal(password))"), logger: logger)
        } catch where error.sqlState == "42710" || error.isUniqueViolation {
            // duplicate_object: created concurrently
            try await admin.query(alter, logger: logger)
        }
    }

    static func identifier(_ name: String) throws -> String {
        let valid = !name.isEmpty && name.count <= 63
            && name.first.map { $0 == "_" || ("a"..."z").contains($0) } == true
            && name.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
        guard valid else { throw ProvisioningError.invalidIdentifier(name) }
        return "\"\(name)\""
    }

    /// An escape-string literal, read the same whatever `standard_conforming_strings` says.
    static func literal(_ text: String) -> String {
        "E'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }
}
