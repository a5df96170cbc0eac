import Logging
import PostgresNIO
import ServiceLifecycle

/// A service's "a replica is running" lock (a PostgreSQL advisory lock by name). Every running replica holds it
/// shared; an offline rebuild takes it exclusively, so it refuses to start while a replica could change what it
/// replaces.
public struct ReplicaLock: Sendable {
    public let name: String

    public init(_ name: String) { self.name = name }

    /// Waits until it is held shared on this connection; it is released when the connection ends.
    public func holdShared(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_lock_shared(hashtext(\(name)))", logger: logger)
    }

    /// Takes it exclusively on this connection if no replica holds it; false while one does.
    public func takeExclusively(on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.query("SELECT pg_try_advisory_lock(hashtext(\(name)))", logger: logger).collect().first?.decode(Bool.self) ?? false
    }
}

/// Holds a `ReplicaLock` shared on a connection of its own for as long as the replica runs, and takes it again when
/// that connection is lost. While it is held, `whileHeld` runs on the connection; by default it checks every ten
/// seconds that the connection lives, because a lost connection silently drops the lock.
public struct ReplicaPresence: Service {
    let client: PostgresClient
    let lock: ReplicaLock
    let logger: Logger
    let whileHeld: @Sendable (PostgresConnection) async throws -> Void
    let lost: @Sendable (any Error) -> Void

    public init(
        client: PostgresClient, lock: ReplicaLock, logger: Logger,
        whileHeld: (@Sendable (PostgresConnection) async throws -> Void)? = nil,
        lost: (@Sendable (any Error) -> Void)? = nil
    ) {
        self.client = client
        self.lock = lock
        self.logger = logger
        self.whileHeld = whileHeld ?? { [logger] connection in
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(10))
                try await connection.query("SELECT 1", logger: logger)
            }
        }
        self.lost = lost ?? { [logger] error in logger.warning("Replica lock lost; taking it again", metadata: ["error": "\(error)"]) }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await lock.holdShared(on: connection, logger: logger)
                        try await whileHeld(connection)
                    }
                } catch {
                    if !Task.isCancelled { lost(error) }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
