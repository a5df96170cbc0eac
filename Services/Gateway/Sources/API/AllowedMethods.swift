import HTTPTypes

/// Which methods the gateway answers on a path, resolved as Hummingbird's router resolves it: segment by segment, a
/// literal segment before a `{parameter}`, backtracking only when the path runs into a dead end, and the first node
/// that takes the whole path decides (so `PATCH /v1/groups/join` is judged by `POST /v1/groups/join`, not by
/// `PATCH /v1/groups/{groupID}`). A path whose node has other methods is answered 405 with them in `Allow`; a path no
/// route has stays a 404.
struct AllowedMethods: Sendable {
    private final class Node: @unchecked Sendable {
        /// Literal segments; `nil` for a `{parameter}`.
        let segment: String?
        var children: [Node] = []
        var methods: Set<HTTPRequest.Method> = []

        init(segment: String?) {
            self.segment = segment
        }

        func child(_ segment: String?) -> Node {
            if let existing = children.first(where: { $0.segment == segment }) { return existing }
            let node = Node(segment: segment)
            children.append(node)
            // Literals are tried before parameters, as the router does.
            children.sort { ($0.segment != nil ? 0 : 1) < ($1.segment != nil ? 0 : 1) }
            return node
        }
    }

    /// Built once, then only read.
    private let root = Node(segment: "")

    /// The order methods are listed in `Allow`.
    static let listingOrder: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    init(_ routes: [(method: HTTPRequest.Method, path: String)]) {
        for route in routes {
            var node = root
            for segment in Self.segments(route.path) {
                node = node.child(segment.hasPrefix("{") && segment.hasSuffix("}") ? nil : String(segment))
            }
            node.methods.insert(route.method)
        }
    }

    /// The methods of the route the router would pick for `path`, in `listingOrder`; empty when it picks none.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let methods = declared(for: path)
        return Self.listingOrder.filter(methods.contains) + methods.filter { !Self.listingOrder.contains($0) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// Whether the route the router would pick for `path` answers `method`, or no route takes the path at all: what
    /// every request asks, without listing the methods.
    func permits(_ method: HTTPRequest.Method, on path: String) -> Bool {
        let methods = declared(for: path)
        return methods.isEmpty || methods.contains(method)
    }

    private func declared(for path: String) -> Set<HTTPRequest.Method> {
        let parts = Self.segments(path)
        return parts.isEmpty ? root.methods : (Self.resolve(parts[...], in: root)?.methods ?? [])
    }

    /// `Allow`'s value: `GET, POST`.
    func allowHeader(for path: String) -> String? {
        let methods = methods(for: path)
        return methods.isEmpty ? nil : methods.map(\.rawValue).joined(separator: ", ")
    }

    /// The first node, literals first, that takes every part.
    private static func resolve(_ parts: ArraySlice<Substring>, in node: Node) -> Node? {
        guard let part = parts.first else { return node }
        for child in node.children where child.segment == nil || child.segment![...] == part {
            if let found = resolve(parts.dropFirst(), in: child) { return found }
        }
        return nil
    }

    /// Empty segments are ignored, as the router ignores them (`/v1/me/` is `/v1/me`).
    private static func segments(_ path: String) -> [Substring] {
        path.prefix { $0 != "?" }.split(separator: "/")
    }
}
