import Foundation

public struct RankEntry: Sendable, Equatable {
    public var userID: UUID
    public var score: Double
    public var name: String

    public init(userID: UUID, score: Double, name: String) {
        self.userID = userID
        self.score = score
        self.name = name
    }
}

/// One board window's standings in memory: an order-statistic treap with subtree sizes.
///
/// Board order: score descending, then `name.lowercased()`, then `name` (Swift's `String` order: Unicode scalars after
/// canonical normalization, the same on every platform), then the user ID (byte order, which is `uuidString` order). Ranks are
/// competition ranks ("1, 2, 2, 4"): 1 + the number of entries with a strictly higher score. A NaN score is stored as
/// `-infinity`.
///
/// Memory: nodes live in one array (`Node`: 56 bytes, with Int32 child links, subtree size and priority), removed nodes
/// go to a free list, and the user ID → node map is an open-addressing table of Int32 node indices that is at most 3/4
/// full (5.3 to 10.7 bytes per entry). So about 61 to 67 bytes per entry, plus the heap copy of a name longer than 15
/// UTF-8 bytes (Swift keeps shorter ones inline), the node array's spare capacity after growth (none after
/// `reserveCapacity`) and removed nodes waiting on the free list. `LeaderboardDomainTests` computes the figure from
/// `MemoryLayout`. A treap's expected depth is about 2 ln n (some 30 levels at a million entries).
///
/// A value type: copies share storage until one of them is mutated (copy-on-write), and mutations of a uniquely
/// referenced index happen in place.
public struct RankIndex: Sendable {
    struct Node {
        var userID: UUID
        var score: Double
        var name: String
        var left: Int32
        var right: Int32
        /// The subtree's size; for a node on the free list, the next free node.
        var size: Int32
        /// Heap priority (a parent's is at least its children's), derived from the user ID, so the same members
        /// always make the same tree whatever the order they arrived in.
        var priority: UInt32
    }

    static let none: Int32 = -1

    private(set) var nodes: [Node] = []
    /// Open addressing with linear probing: node indices by the hash of their user ID; `none` is empty.
    private(set) var slots: [Int32] = []
    private(set) var root = none
    private(set) var freeList = none
    public private(set) var count = 0

    public init() {}

    public init(minimumCapacity: Int) {
        reserveCapacity(minimumCapacity)
    }

    /// A board's rows gathered to build an index in one pass (`RankIndex(_ rows:)`): loading a board. A user ID
    /// appended twice keeps its last row. With the row count known up front nothing grows while rows arrive.
    public struct Rows: Sendable {
        /// Nodes in arrival order with the user ID table filled in; no tree yet.
        fileprivate var index = RankIndex()

        public init(capacity: Int = 0) {
            index.reserveCapacity(capacity)
        }

        public var count: Int { index.count }

        public mutating func append(_ userID: UUID, score: Double, name: String) {
            if let node = index.find(userID) {
                index.nodes[node].score = RankIndex.normalized(score)
                index.nodes[node].name = name
                return
            }
            precondition(index.count < Int32.max, "a RankIndex holds at most Int32.max entries")
            index.nodes.append(
                Node(
                    userID: userID, score: RankIndex.normalized(score), name: name, left: RankIndex.none, right: RankIndex.none, size: 1,
                    priority: RankIndex.priority(userID)))
            index.insertSlot(Int32(index.nodes.count - 1))
            index.count += 1
        }
    }

    /// The index of `entries`, in any order (a user ID given twice keeps its last entry).
    public init(_ entries: [RankEntry]) {
        var rows = Rows(capacity: entries.count)
        for entry in entries { rows.append(entry.userID, score: entry.score, name: entry.name) }
        self.init(rows)
    }

    /// The index of the rows, built with one sort and one linear pass instead of an insertion each. The tree is the
    /// one `set` would build (its shape depends only on the members), and the nodes end up in board order.
    public init(_ rows: Rows) {
        self = rows.index
        let n = count
        // Board order (`precedes`) as a permutation: by score, then each run of equal scores by name, its names
        // lowered once rather than at every comparison.
        var order = Array(0..<Int32(n))
        nodes.withUnsafeBufferPointer { nodes in
            order.sort { nodes[Int($0)].score > nodes[Int($1)].score }
            var start = 0
            while start < n {
                var end = start + 1
                while end < n, nodes[Int(order[end])].score == nodes[Int(order[start])].score { end += 1 }
                if end - start > 1 {
                    let group = Array(order[start..<end])
                    let lowered = group.map { nodes[Int($0)].name.lowercased() }
                    var positions = Array(group.indices)
                    positions.sort { a, b in
                        let (x, y) = (nodes[Int(group[a])], nodes[Int(group[b])])
                        if x.name != y.name { return lowered[a] != lowered[b] ? lowered[a] < lowered[b] : x.name < y.name }
                        return Self.bytes(x.userID) < Self.bytes(y.userID)
                    }
                    for (offset, position) in positions.enumerated() { order[start + offset] = group[position] }
                }
                start = end
            }
        }
        // Put the nodes in that order in place (node i takes the node order[i]), one cycle of swaps at a time.
        for first in 0..<n where order[first] != Int32(first) {
            var at = first
            while Int(order[at]) != first {
                let from = Int(order[at])
                nodes.swapAt(at, from)
                order[at] = Int32(at)
                at = from
            }
            order[at] = Int32(at)
        }
        order = []
        slots.withUnsafeMutableBufferPointer { $0.update(repeating: Self.none) }
        for node in 0..<Int32(n) {
            var i = home(nodes[node].userID)
            while slots[i] != Self.none { i = (i + 1) & (slots.count - 1) }
            slots[i] = node
        }

        // The treap of nodes already in order: each new node takes the lower-priority right spine as its left child.
        var spine: [Int32] = []
        for node in 0..<Int32(n) {
            var below = Self.none
            while let top = spine.last, nodes[top].priority < nodes[node].priority { below = spine.removeLast() }
            nodes[node].left = below
            if let top = spine.last { nodes[top].right = node }
            spine.append(node)
        }
        root = spine.first ?? Self.none
        _ = recount(root)
    }

    /// Sets the subtree sizes below `t` (after a bulk build); returns the size of `t`'s.
    private mutating func recount(_ t: Int32) -> Int32 {
        guard t != Self.none else { return 0 }
        let left = recount(nodes[t].left)
        let right = recount(nodes[t].right)
        nodes[t].size = 1 + left + right
        return 1 + left + right
    }

    /// Makes room for `capacity` entries without further allocation (loading a board of known size).
    public mutating func reserveCapacity(_ capacity: Int) {
        nodes.reserveCapacity(capacity)
        if Self.slotCount(for: capacity) > slots.count { rehash(slotCount: Self.slotCount(for: capacity)) }
    }

    // MARK: Reading

    public func entry(_ userID: UUID) -> RankEntry? {
        find(userID).map(entry(at:))
    }

    public func rank(of userID: UUID) -> Int? {
        find(userID).map { rank(forScore: nodes[$0].score) }
    }

    public func rank(forScore score: Double) -> Int {
        let score = Self.normalized(score)
        var above = 0
        var t = root
        while t != Self.none {
            if nodes[t].score > score {
                above += size(nodes[t].left) + 1
                t = nodes[t].right
            } else {
                t = nodes[t].left
            }
        }
        return above + 1
    }

    public func position(of userID: UUID) -> Int? {
        find(userID).map(countBefore)
    }

    /// Up to `limit` entries in board order from `position` (a negative position counts as 0).
    public func entries(from position: Int, limit: Int) -> [RankEntry] {
        let position = max(0, position)
        guard limit > 0, position < count else { return [] }
        var path: [Int32] = []
        var t = root
        var skip = position
        while t != Self.none {
            let leftSize = size(nodes[t].left)
            if skip < leftSize {
                path.append(t)
                t = nodes[t].left
            } else if skip == leftSize {
                path.append(t)
                break
            } else {
                skip -= leftSize + 1
                t = nodes[t].right
            }
        }
        var result: [RankEntry] = []
        result.reserveCapacity(min(limit, count - position))
        while result.count < limit, let t = path.popLast() {
            result.append(entry(at: t))
            var next = nodes[t].right
            while next != Self.none {
                path.append(next)
                next = nodes[next].left
            }
        }
        return result
    }

    /// Up to `limit` entries in board order from `position`, each with its rank. Only the first rank is searched for:
    /// an entry scoring less than the one before it has every entry before it scoring more, so its rank is its position + 1.
    public func rankedEntries(from position: Int, limit: Int) -> [(entry: RankEntry, rank: Int)] {
        let entries = entries(from: position, limit: limit)
        var ranked: [(entry: RankEntry, rank: Int)] = []
        ranked.reserveCapacity(entries.count)
        for (offset, entry) in entries.enumerated() {
            let rank =
                if let previous = ranked.last { previous.entry.score == entry.score ? previous.rank : max(0, position) + offset + 1 }
                else { rank(forScore: entry.score) }
            ranked.append((entry, rank))
        }
        return ranked
    }

    public var topScore: Double? {
        var t = root
        while t != Self.none, nodes[t].left != Self.none { t = nodes[t].left }
        return t == Self.none ? nil : nodes[t].score
    }

    public func topPercent(of userID: UUID) -> Int? {
        rank(of: userID).map { Self.topPercent(rank: $0, of: count) }
    }

    /// "Top n %" for `rank` among `participants`: ceil(100 × rank ÷ participants).
    public static func topPercent(rank: Int, of participants: Int) -> Int {
        (100 * rank + participants - 1) / participants
    }

    // MARK: Changing

    public mutating func set(_ userID: UUID, score: Double, name: String) {
        let score = Self.normalized(score)
        if let node = find(userID) {
            guard nodes[node].score != score || nodes[node].name != name else { return }
            detach(node)
            nodes[node].score = score
            nodes[node].name = name
            attach(node)
            return
        }
        precondition(count < Int32.max, "a RankIndex holds at most Int32.max entries")
        let fresh = Node(userID: userID, score: score, name: name, left: Self.none, right: Self.none, size: 1, priority: Self.priority(userID))
        let node: Int32
        if freeList != Self.none {
            node = freeList
            freeList = nodes[node].size
            nodes[node] = fresh
        } else {
            node = Int32(nodes.count)
            nodes.append(fresh)
        }
        insertSlot(node)
        attach(node)
        count += 1
    }

    public mutating func remove(_ userID: UUID) {
        guard let node = find(userID) else { return }
        detach(node)
        removeSlot(node)
        nodes[node].name = ""
        nodes[node].size = freeList
        freeList = node
        count -= 1
    }

    // MARK: The treap

    private func size(_ t: Int32) -> Int {
        t == Self.none ? 0 : Int(nodes[t].size)
    }

    private mutating func update(_ t: Int32) {
        nodes[t].size = Int32(1 + size(nodes[t].left) + size(nodes[t].right))
    }

    /// Whether node `a` comes before node `b` in board order.
    private func precedes(_ a: Int32, _ b: Int32) -> Bool {
        let x = nodes[a]
        let y = nodes[b]
        if x.score != y.score { return x.score > y.score }
        if x.name != y.name {
            let (lowerX, lowerY) = (x.name.lowercased(), y.name.lowercased())
            return lowerX != lowerY ? lowerX < lowerY : x.name < y.name
        }
        return Self.bytes(x.userID) < Self.bytes(y.userID)
    }

    /// How many tree nodes come before `node` in board order: its position if it is in the tree.
    private func countBefore(_ node: Int32) -> Int {
        var before = 0
        var t = root
        while t != Self.none {
            if t == node { return before + size(nodes[t].left) }
            if precedes(node, t) {
                t = nodes[t].left
            } else {
                before += size(nodes[t].left) + 1
                t = nodes[t].right
            }
        }
        return before
    }

    private mutating func attach(_ node: Int32) {
        let (before, after) = split(root, countBefore(node))
        root = merge(merge(before, node), after)
    }

    private mutating func detach(_ node: Int32) {
        let (before, rest) = split(root, countBefore(node))
        let (single, after) = split(rest, 1)
        assert(single == node)
        root = merge(before, after)
        nodes[node].left = Self.none
        nodes[node].right = Self.none
        nodes[node].size = 1
    }

    /// Splits the tree at `t` into its first `k` nodes and the rest.
    private mutating func split(_ t: Int32, _ k: Int) -> (Int32, Int32) {
        guard t != Self.none else { return (Self.none, Self.none) }
        let leftSize = size(nodes[t].left)
        if k <= leftSize {
            let (first, rest) = split(nodes[t].left, k)
            nodes[t].left = rest
            update(t)
            return (first, t)
        }
        let (first, rest) = split(nodes[t].right, k - leftSize - 1)
        nodes[t].right = first
        update(t)
        return (t, rest)
    }

    /// Joins two trees whose nodes all come before (`a`) and after (`b`) each other.
    private mutating func merge(_ a: Int32, _ b: Int32) -> Int32 {
        if a == Self.none { return b }
        if b == Self.none { return a }
        if nodes[a].priority >= nodes[b].priority {
            let right = merge(nodes[a].right, b)
            nodes[a].right = right
            update(a)
            return a
        }
        let left = merge(a, nodes[b].left)
        nodes[b].left = left
        update(b)
        return b
    }

    private func entry(at t: Int32) -> RankEntry {
        RankEntry(userID: nodes[t].userID, score: nodes[t].score, name: nodes[t].name)
    }

    private static func normalized(_ score: Double) -> Double {
        score.isNaN ? -.infinity : score
    }

    // MARK: The user ID → node table

    private static func slotCount(for entries: Int) -> Int {
        var slots = 8
        while slots * 3 < entries * 4 { slots *= 2 }
        return slots
    }

    private func home(_ userID: UUID) -> Int {
        Int(truncatingIfNeeded: Self.hash(userID)) & (slots.count - 1)
    }

    private func find(_ userID: UUID) -> Int32? {
        guard !slots.isEmpty else { return nil }
        var i = home(userID)
        while slots[i] != Self.none {
            if nodes[slots[i]].userID == userID { return slots[i] }
            i = (i + 1) & (slots.count - 1)
        }
        return nil
    }

    private mutating func insertSlot(_ node: Int32) {
        if (count + 1) * 4 > slots.count * 3 { rehash(slotCount: Self.slotCount(for: count + 1)) }
        var i = home(nodes[node].userID)
        while slots[i] != Self.none { i = (i + 1) & (slots.count - 1) }
        slots[i] = node
    }

    /// Backward-shift deletion: no tombstones, so lookups never slow down after removals.
    private mutating func removeSlot(_ node: Int32) {
        let mask = slots.count - 1
        var hole = home(nodes[node].userID)
        while slots[hole] != node { hole = (hole + 1) & mask }
        var i = hole
        while true {
            i = (i + 1) & mask
            let moved = slots[i]
            if moved == Self.none { break }
            if (i - home(nodes[moved].userID)) & mask >= (i - hole) & mask {
                slots[hole] = moved
                hole = i
            }
        }
        slots[hole] = Self.none
    }

    private mutating func rehash(slotCount: Int) {
        let old = slots
        slots = Array(repeating: Self.none, count: slotCount)
        for node in old where node != Self.none {
            var i = home(nodes[node].userID)
            while slots[i] != Self.none { i = (i + 1) & (slotCount - 1) }
            slots[i] = node
        }
    }

    // MARK: User IDs as numbers

    /// The 16 bytes as two big-endian numbers: their order is the byte order, which is `uuidString`'s.
    private static func bytes(_ userID: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: userID.uuid) {
            (UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }

    private static func hash(_ userID: UUID) -> UInt64 {
        let (high, low) = bytes(userID)
        return mix(high ^ mix(low))
    }

    private static func priority(_ userID: UUID) -> UInt32 {
        UInt32(truncatingIfNeeded: mix(hash(userID)) >> 32)
    }

    /// SplitMix64's finalizer.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Array where Element == RankIndex.Node {
    fileprivate subscript(index: Int32) -> Element {
        get { self[Int(index)] }
        _modify { yield &self[Int(index)] }
    }
}
