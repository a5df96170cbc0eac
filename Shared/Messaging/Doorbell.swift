import Synchronization

/// Wakes everyone waiting; a ring with nobody waiting is remembered until the next wait. Several waiters may share
/// one bell (relays of one outbox in a test, say): each is woken by a ring, its own timeout or its own cancellation.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waits that timed out or were cancelled before their continuation was registered.
        var ended: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    func ring() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.rung = true
                return []
            }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Forgets a ring nobody waited for: whoever calls it is about to look for what the ring announced.
    func forget() {
        state.withLock { $0.rung = false }
    }

    /// Returns when rung, after `timeout`, or when the task is cancelled.
    func wait(timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                    self.end(id)
                } catch {}
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool in
                        if state.rung || state.ended.remove(id) != nil {
                            state.rung = false
                            return true
                        }
                        state.waiters[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                self.end(id)
            }
            group.cancelAll()
        }
        state.withLock { _ = $0.ended.remove(id) }
    }

    /// Ends one wait early: resumes it, or, if it has not started waiting yet, makes it return at once.
    private func end(_ id: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.ended.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.resume()
    }
}
