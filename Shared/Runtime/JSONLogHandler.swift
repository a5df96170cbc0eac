import Foundation
import Logging
import SurgeContracts
import Synchronization

/// One JSON object per line on standard output: what log collectors expect from a container.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let output: @Sendable (String) -> Void

    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, output: @escaping @Sendable (String) -> Void = JSONLogHandler.standardOutput) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        var object: [String: Any] = [
            "time": Timestamp.format(Date()),
            "level": event.level.rawValue,
            "logger": label,
            "message": event.message.description,
        ]
        for (key, value) in merged where object[key] == nil {
            object[key] = Self.json(value)
        }
        if let error = event.error { object["error"] = String(describing: error) }
        if event.level >= .error { object["source"] = "\(event.file):\(event.line)" }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        output(String(decoding: data, as: UTF8.self))
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    private static let lock = Mutex(())

    public static let standardOutput: @Sendable (String) -> Void = { line in
        lock.withLock { _ in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
