import Logging
import ServiceLifecycle

/// Runs `work` every `interval` until graceful shutdown; a failed round is logged and the next one still runs.
public struct PeriodicService: Service {
    public let name: String
    public let interval: Duration
    public let logger: Logger
    public let work: @Sendable () async throws -> Void

    public init(_ name: String, every interval: Duration, logger: Logger, work: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.work = work
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await work()
                } catch {
                    logger.warning("Periodic task failed", metadata: ["task": "\(name)", "error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
