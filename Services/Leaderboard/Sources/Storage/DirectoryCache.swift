import Foundation
import Synchronization

/// Directory facts a read needs (who may see a board, the caller's zone, names and avatars, friends), kept in the
/// replica's memory while the change feed is listened to; any directory change empties it. No TTL: an entry is
/// good until a notice says the directory changed.
final class DirectoryCache: Sendable {
    /// What a cached fact is about (hashed as ids, not formatted into a string on every read).
    enum Key: Hashable, Sendable {
        /// The challenge's board as the user may see it.
        case challenge(UUID, caller: UUID)
        /// The group's board as the user may see it.
        case group(UUID, caller: UUID)
        case profile(UUID)
        case friends(UUID)
        /// The boards the user can see.
        case boards(UUID)
    }

    private struct State {
        var entries: [Key: any Sendable] = [:]
        /// Bumped by every invalidation: a value loaded across one is not kept (it may predate the change).
        var generation = 0
        var trusted = false
    }

    /// A held value; `nil` when the directory has no such thing (absence is a fact too, until the directory changes).
    private struct Entry<Value: Sendable>: Sendable {
        var value: Value?
    }

    /// Past this many entries the cache starts over, so memory follows the readers of the moment.
    static let capacity = 100_000
    private let state = Mutex(State())

    /// The cached value for `key`, or `load`'s, kept when no change arrived while it loaded.
    func value<Value: Sendable>(_ key: Key, load: () async throws -> Value) async throws -> Value {
        let (held, generation) = state.withLock { state -> (Value?, Int?) in
            guard state.trusted else { return (nil, nil) }
            return ((state.entries[key] as? Entry<Value>)?.value, state.generation)
        }
        if let held { return held }
        let loaded = try await load()
        if let generation { keep(Entry(value: loaded), for: key, loadedIn: generation) }
        return loaded
    }

    /// Values for many keys at once: the missing ones loaded together.
    func values<ID: Hashable & Sendable, Value: Sendable>(
        _ ids: [ID], key: (ID) -> Key, load: ([ID]) async throws -> [ID: Value]
    ) async throws -> [ID: Value] {
        var found: [ID: Value] = [:]
        found.reserveCapacity(ids.count)
        var missing: [ID] = []
        let generation = state.withLock { state -> Int? in
            guard state.trusted else { return nil }
            for id in ids {
                if let entry = state.entries[key(id)] as? Entry<Value> {
                    found[id] = entry.value
                } else {
                    missing.append(id)
                }
            }
            return state.generation
        }
        if generation == nil { missing = ids }
        guard !missing.isEmpty else { return found }
        let loaded = try await load(missing)
        for id in missing {
            found[id] = loaded[id]
            if let generation { keep(Entry(value: loaded[id]), for: key(id), loadedIn: generation) }
        }
        return found
    }

    private func keep<Value: Sendable>(_ entry: Entry<Value>, for key: Key, loadedIn generation: Int) {
        state.withLock { state in
            guard state.trusted, state.generation == generation else { return }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = entry
        }
    }

    func invalidateAll() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
        }
    }

    /// The feed is listened to from now on: start from nothing, then keep.
    func trustAfterReconnect() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
            state.trusted = true
        }
    }

    /// The feed is lost: notices may be missed, so nothing held is used.
    func distrust() {
        state.withLock { state in
            state.generation += 1
            state.entries.removeAll()
            state.trusted = false
        }
    }
}
