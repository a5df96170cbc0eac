import Foundation

/// One Server-Sent Event in the `text/event-stream` framing (WHATWG HTML, "Server-sent events").
public struct ServerSentEvent: Sendable, Equatable {
    public var id: String?
    public var name: String?
    /// The event's data; a multi-line text is sent as one `data:` line per line.
    public var data: String

    public init(id: String? = nil, name: String? = nil, data: String) {
        self.id = id
        self.name = name
        self.data = data
    }

    public var encoded: String {
        var text = ""
        if let name { text += "event: \(Self.field(name))\n" }
        if let id { text += "id: \(Self.field(id))\n" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line.replacingOccurrences(of: "\r", with: ""))\n"
        }
        return text + "\n"
    }

    /// A comment line: ignored by clients, it keeps proxies and the connection from timing out.
    public static func comment(_ text: String) -> String { ": \(field(text))\n\n" }

    /// Tells the client how long to wait before reconnecting.
    public static func retry(milliseconds: Int) -> String { "retry: \(milliseconds)\n\n" }

    /// A field value cannot hold a line break.
    private static func field(_ text: String) -> String { text.filter { $0 != "\n" && $0 != "\r" } }
}
