import Foundation

/// The CloudEvents Kafka protocol binding, binary content mode: attributes travel as `ce_` headers, the record value
/// is the JSON `data`, and the record key is the partition key (the `partitionkey` extension).
extension EventRecord {
    public enum Header {
        public static let specVersion = "ce_specversion"
        public static let id = "ce_id"
        public static let source = "ce_source"
        public static let type = "ce_type"
        public static let time = "ce_time"
        public static let subject = "ce_subject"
        public static let partitionKey = "ce_partitionkey"
        public static let traceparent = "ce_traceparent"
        public static let tracestate = "ce_tracestate"
        public static let requestID = "ce_requestid"
        public static let contentType = "content-type"
    }

    public var kafkaKey: Data { Data(partitionKey.utf8) }

    public var kafkaHeaders: [(name: String, value: Data)] {
        var headers: [(String, String)] = [
            (Header.specVersion, Self.specVersion),
            (Header.id, id.key),
            (Header.source, source),
            (Header.type, type),
            (Header.time, Timestamp.format(time)),
            (Header.subject, subject),
            (Header.partitionKey, partitionKey),
            (Header.contentType, Self.contentType),
        ]
        if let traceparent = trace.traceparent { headers.append((Header.traceparent, traceparent)) }
        if let tracestate = trace.tracestate { headers.append((Header.tracestate, tracestate)) }
        if let requestID = trace.requestID { headers.append((Header.requestID, requestID)) }
        return headers.map { (name: $0.0, value: Data($0.1.utf8)) }
    }

    /// Reads a record received from Kafka. Throws when a required attribute is missing or malformed.
    public init(kafkaKey: Data?, value: Data?, headers: [(name: String, value: Data)]) throws {
        func header(_ name: String) -> String? {
            headers.last(where: { $0.name == name }).map { String(decoding: $0.value, as: UTF8.self) }
        }
        func required(_ name: String) throws -> String {
            guard let value = header(name), !value.isEmpty else { throw EventDecodingError.missingHeader(name) }
            return value
        }
        let specVersion = try required(Header.specVersion)
        guard specVersion == Self.specVersion else { throw EventDecodingError.unsupportedSpecVersion(specVersion) }
        let idText = try required(Header.id)
        guard let id = UUID(text: idText) else { throw EventDecodingError.invalidHeader(Header.id, idText) }
        let timeText = try required(Header.time)
        guard let time = Timestamp.parse(timeText) else { throw EventDecodingError.invalidHeader(Header.time, timeText) }
        let key = header(Header.partitionKey) ?? kafkaKey.map { String(decoding: $0, as: UTF8.self) } ?? ""
        self.init(
            id: id,
            source: try required(Header.source),
            type: try required(Header.type),
            time: time,
            subject: header(Header.subject) ?? "",
            partitionKey: key,
            trace: TraceContext(
                traceparent: header(Header.traceparent), tracestate: header(Header.tracestate),
                requestID: header(Header.requestID)),
            data: value ?? Data())
    }
}
