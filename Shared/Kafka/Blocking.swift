import Dispatch
import Foundation
import Synchronization

/// Runs a blocking librdkafka call on a Dispatch thread, never on Swift's cooperative pool.
func offThePool<Value: Sendable, Failure: Error>(
    _ work: @escaping @Sendable () throws(Failure) -> Value
) async throws(Failure) -> Value {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, Failure>, Never>) in
        DispatchQueue.global().async { continuation.resume(returning: Result { () throws(Failure) -> Value in try work() }) }
    }
    return try result.get()
}

/// Runs long blocking work (reading whole topics) on a thread of its own rather than a Dispatch worker: Dispatch keeps
/// about as many workers as cores and cannot tell one blocked in librdkafka from a busy one, so the work the reader
/// hands to Dispatch would run on one core less.
func onThreadOfItsOwn<Value: Sendable>(named name: String, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.name = name
        thread.start()
    }
}

/// A dedicated thread that repeats a blocking step (such as `rd_kafka_poll` with a timeout) until stopped or until
/// the step returns false.
final class BlockingLoop: Sendable {
    private let name: String
    private let step: @Sendable () -> Bool
    private let running = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    private let joined = Atomic<Bool>(false)

    init(name: String, step: @escaping @Sendable () -> Bool) {
        self.name = name
        self.step = step
    }

    func start() {
        guard !started.exchange(true, ordering: .sequentiallyConsistent) else { return }
        running.store(true, ordering: .sequentiallyConsistent)
        let thread = Thread { [self] in
            while running.load(ordering: .sequentiallyConsistent), step() {}
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the loop and waits for the current step to return. Blocks: call it off the cooperative pool. Only the
    /// first call waits.
    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        guard started.load(ordering: .sequentiallyConsistent), !joined.exchange(true, ordering: .sequentiallyConsistent) else { return }
        finished.wait()
    }
}
