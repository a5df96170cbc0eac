import ServiceLifecycle

/// Opens once: when the service's database is migrated. Everything that reads or writes the service's tables in the
/// background (relay, consumers, periodic jobs) waits on it, so the migration can run as a lifecycle step instead of
/// inside `buildApplication`.
public actor MigrationGate {
    private var isOpen = false
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var nextWaiter = 0

    public init() {}

    public func open() {
        isOpen = true
        for waiter in waiters.values { waiter.resume() }
        waiters.removeAll()
    }

    /// Returns when the gate opens; throws `CancellationError` if the waiting task is cancelled first.
    public func wait() async throws {
        if isOpen { return }
        let id = nextWaiter
        nextWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                }
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }
}

/// A service that starts only once the migration gate opens, and ends quietly if the application shuts down (or the
/// migration fails and the group is cancelled) before that.
struct AfterMigration: Service {
    let gate: MigrationGate
    let service: any Service

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await gate.wait() }
        } catch is CancellationError {
            return
        }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await service.run()
    }
}
