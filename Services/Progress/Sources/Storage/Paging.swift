import Foundation
import SurgeRuntime

/// A list position on an (instant, id) sort key: what every progress list pages by.
protocol KeysetPosition: Codable, Sendable {
    init(instant: Date, id: UUID)
}

/// Which way a list runs along its key.
enum KeysetOrder {
    case newestFirst, oldestFirst
}

/// Keyset paging, the one way progress's lists page: the rows after the cursor's key (or, on the first page, after a key
/// beyond every row), one more than the page shows, which `PageRequest.page` turns into the next cursor.
extension PageRequest where Position: KeysetPosition {
    /// The key the page's rows come after.
    func start(_ order: KeysetOrder) -> Position {
        if let after { return after }
        return switch order {
        case .newestFirst: Position(instant: .distantFuture, id: UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!)
        case .oldestFirst: Position(instant: .distantPast, id: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!)
        }
    }

    /// How many rows to fetch: the page and the one that says whether there is more.
    var fetchLimit: Int { limit + 1 }
}
