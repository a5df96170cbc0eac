import HTTPTypes

/// Which methods the gateway answers on a path, from its route templates (`{x}` matches any one segment, as
/// Hummingbird's router does). A path that some route has, asked with a method none of them has, is answered 405 with
/// these in `Allow`; a path no route has stays a 404.
struct AllowedMethods: Sendable {
    private enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter
    }

    private struct Template: Sendable {
        var segments: [Segment]
        var methods: Set<HTTPRequest.Method>
    }

    private let templates: [Template]

    /// The order methods are listed in `Allow`.
    static let listingOrder: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]

    init(_ routes: [(method: HTTPRequest.Method, path: String)]) {
        var byPath: [[Segment]: Set<HTTPRequest.Method>] = [:]
        var order: [[Segment]] = []
        for route in routes {
            let segments = Self.segments(route.path).map { $0.hasPrefix("{") && $0.hasSuffix("}") ? Segment.parameter : .literal(String($0)) }
            if byPath[segments] == nil { order.append(segments) }
            byPath[segments, default: []].insert(route.method)
        }
        templates = order.map { Template(segments: $0, methods: byPath[$0]!) }
    }

    /// The methods of every route whose template matches `path`, in `listingOrder`; empty when none matches.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let parts = Self.segments(path)
        var methods = Set<HTTPRequest.Method>()
        for template in templates where template.segments.count == parts.count {
            let matches = zip(template.segments, parts).allSatisfy { segment, part in
                switch segment {
                case .parameter: true
                case .literal(let literal): literal[...] == part
                }
            }
            if matches { methods.formUnion(template.methods) }
        }
        return Self.listingOrder.filter(methods.contains) + methods.filter { !Self.listingOrder.contains($0) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// `Allow`'s value: `GET, POST`.
    func allowHeader(for path: String) -> String? {
        let methods = methods(for: path)
        return methods.isEmpty ? nil : methods.map(\.rawValue).joined(separator: ", ")
    }

    /// Empty segments are ignored, as the router ignores them (`/v1/me/` is `/v1/me`).
    private static func segments(_ path: String) -> [Substring] {
        path.prefix { $0 != "?" }.split(separator: "/")
    }
}
