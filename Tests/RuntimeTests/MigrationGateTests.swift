import Logging
import ServiceLifecycle
import SurgeTestSupport
import Testing

@testable import SurgeRuntime

/// The relay, consumers and periodic services of an application wait for its migrations (`MigrationGate`), which
/// run as the application's first lifecycle step.
@Suite("Service runtime: the migration gate", .tags(.unit), .kind(.unit), .timeLimit(.minutes(1)))
struct MigrationGateTests {
    /// Records whether the gate had been opened when it ran.
    struct Recorder: Service {
        let opened: LockedValue<Bool>
        let ranAfterOpening: LockedValue<[Bool]>

        func run() async throws {
            let opened = self.opened.value
            ranAfterOpening.withLock { $0.append(opened) }
        }
    }

    @Test("every waiter is released when the gate opens, and a wait after opening returns at once")
    func releasesWaiters() async throws {
        let gate = MigrationGate()
        let released = LockedValue(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    try await gate.wait()
                    released.withLock { $0 += 1 }
                }
            }
            #expect(released.value == 0)
            await gate.open()
            try await group.waitForAll()
        }
        #expect(released.value == 5)
        try await gate.wait()
    }

    @Test("a cancelled waiter throws CancellationError; the gate still opens for the others")
    func cancelledWaiter() async throws {
        let gate = MigrationGate()
        let cancelled = Task { try await gate.wait() }
        let waiting = Task { try await gate.wait() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        await gate.open()
        try await waiting.value
    }

    @Test("a service behind the gate starts only after the gate opens")
    func serviceStartsAfterOpening() async throws {
        let gate = MigrationGate()
        let opened = LockedValue(false)
        let runs = LockedValue<[Bool]>([])
        let service = AfterMigration(gate: gate, service: Recorder(opened: opened, ranAfterOpening: runs))
        let running = Task { try await service.run() }
        opened.withLock { $0 = true }
        await gate.open()
        try await running.value
        #expect(runs.value == [true])
    }

    @Test("a graceful shutdown before the gate opens ends the service without starting it")
    func shutdownBeforeOpening() async throws {
        let gate = MigrationGate()
        let opened = LockedValue(false)
        let runs = LockedValue<[Bool]>([])
        let group = ServiceGroup(
            configuration: .init(
                services: [AfterMigration(gate: gate, service: Recorder(opened: opened, ranAfterOpening: runs))],
                logger: Logger(label: "migration-gate-test")))
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(runs.value.isEmpty)
    }
}
