import Foundation
import Synchronization

/// Directory facts a read needs (who may see a board, the caller's zone, names and avatars, friends), kept in the
/// replica's memory while the change feed is listened to; any directory change empties it. No TTL: an entry is
/// good until a notice says the directory changed.
final class DirectoryCache: Sendable {
    private struct State {
        var entries: [String: any Sendable] = [:]
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
    func value<Value: Sendable>(_ key: String, load: () async throws -> Value) async throws -> Value {
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
    func values<Key: Hashable & Sendable, Value: Sendable>(
        _ keys: [Key], name: (Key) -> String, load: ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        var found: [Key: Value] = [:]
        var missing: [Key] = []
        let generation = state.withLock { state -> Int? in
            guard state.trusted else { return nil }
            for key in keys {
                if let entry = state.entries[name(key)] as? Entry<Value> {
                    found[key] = entry.value
                } else {
                    missing.append(key)
                }
            }
            return state.generation
        }
        if generation == nil { missing = keys }
        guard !missing.isEmpty else { return found }
        let loaded = try await load(missing)
        for key in missing {
            found[key] = loaded[key]
            if let generation { keep(Entry(value: loaded[key]), for: name(key), loadedIn: generation) }
        }
        return found
    }

    private func keep<Value: Sendable>(_ entry: Entry<Value>, for key: String, loadedIn generation: Int) {
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
