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

/// `body` of each item, at most `limit` at a time; the results in the order they finished.
func mapConcurrently<Item: Sendable, Result: Sendable>(
    _ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async throws -> Result
) async throws -> [Result] {
    try await withThrowingTaskGroup(of: Result.self) { group in
        var results: [Result] = []
        results.reserveCapacity(items.count)
        var inFlight = 0
        for item in items {
            if inFlight == limit, let result = try await group.next() {
                results.append(result)
                inFlight -= 1
            }
            group.addTask { try await body(item) }
            inFlight += 1
        }
        for try await result in group { results.append(result) }
        return results
    }
}
