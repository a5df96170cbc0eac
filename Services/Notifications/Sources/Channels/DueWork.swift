/// Claims due work in batches of `batch` and handles a batch's items at once, until a batch comes back short; returns
/// how many were handled. What the push and e-mail dispatchers share.
func handleDue<Item: Sendable>(
    batch: Int, claim: () async throws -> [Item], handle: @escaping @Sendable (Item) async throws -> Void
) async throws -> Int {
    var handled = 0
    while true {
        let claimed = try await claim()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in claimed {
                group.addTask { try await handle(item) }
            }
            try await group.waitForAll()
        }
        handled += claimed.count
        if claimed.count < batch { return handled }
    }
}
