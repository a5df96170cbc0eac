import Logging
import PostgresNIO
import ServiceLifecycle

/// Held (shared) by every running replica on a connection of its own, for as long as it runs: `surge-badges rebuild`
/// takes it exclusively, so it refuses to start while a replica could change what it replaces.
struct ReplicaPresence: Service {
    static let lock = "surge-badges-replicas"

    let client: PostgresClient
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.query("SELECT pg_advisory_lock_shared(hashtext(\(Self.lock)))", logger: logger)
                        // A lost connection drops the lock: notice it, and take it again.
                        while !Task.isCancelled {
                            try await Task.sleep(for: .seconds(10))
                            try await connection.query("SELECT 1", logger: logger)
                        }
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("Replica lock lost; taking it again", metadata: ["error": "\(error)"]) }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
