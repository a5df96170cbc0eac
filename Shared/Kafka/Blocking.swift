import Dispatch
import Foundation
import Synchronization

/// Runs a blocking librdkafka call on a Dispatch thread, never on Swift's cooperative pool.
func offThePool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}

/// A dedicated thread that repeats a blocking step (such as `rd_kafka_poll` with a timeout) until stopped.
final class BlockingLoop: Sendable {
    private let name: String
    private let step: @Sendable () -> Void
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    init(name: String, step: @escaping @Sendable () -> Void) {
        self.name = name
        self.step = step
    }

    func start() {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            while running.load(ordering: .sequentiallyConsistent) { step() }
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the loop and waits for the current step to return.
    func stop() {
        guard started.load(ordering: .sequentiallyConsistent),
            running.exchange(false, ordering: .sequentiallyConsistent)
        else { return }
        finished.wait()
    }
}
