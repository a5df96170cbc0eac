/// Claims due work in batches of `batch` and hands each batch to `handle`, until a batch comes back short; returns how
/// many were handled. What the push and e-mail dispatchers share.
func handleDue<Item: Sendable>(
    batch: Int, claim: () async throws -> [Item], handle: ([Item]) async throws -> Void
) async throws -> Int {
    var handled = 0
    while true {
        let claimed = try await claim()
        try await handle(claimed)
        handled += claimed.count
        if claimed.count < batch { return handled }
    }
}
