/// `body` of each item, at most `limit` at a time; the results in the order they finished. For fanning out calls to
/// a provider or an API (a push per device, a request per user) without an unbounded number in flight.
public func mapConcurrently<Item: Sendable, Result: Sendable>(
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
