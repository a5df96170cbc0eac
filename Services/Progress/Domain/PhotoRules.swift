import Foundation

/// What a progress photo may be: a JPEG, PNG, HEIC or WebP image of at most `maxBytes`, whose bytes match its type.
public enum PhotoRules {
    public static let contentTypes = ["image/jpeg", "image/png", "image/heic", "image/webp"]

    /// Checks the declared type (and, unless `allowEmpty`, the bytes); returns the normalised content type.
    public static func validate(_ data: Data, contentType: String?, maxBytes: Int, allowEmpty: Bool = false) throws(ProgressError) -> String {
        guard let contentType = contentType?.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }),
            contentTypes.contains(contentType)
        else { throw .unsupportedPhotoType }
        if allowEmpty && data.isEmpty { return contentType }
        guard !data.isEmpty else { throw .invalidField("body", "must contain the photo") }
        guard data.count <= maxBytes else { throw .photoTooLarge(limit: maxBytes) }
        guard matches(data, contentType) else {
            throw .invalidField("body", "is not a \(contentType) image")
        }
        return contentType
    }

    static func matches(_ data: Data, _ contentType: String) -> Bool {
        let bytes = [UInt8](data.prefix(12))
        func at(_ offset: Int, _ expected: [UInt8]) -> Bool {
            bytes.count >= offset + expected.count && Array(bytes[offset..<offset + expected.count]) == expected
        }
        switch contentType {
        case "image/jpeg": return at(0, [0xFF, 0xD8, 0xFF])
        case "image/png": return at(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "image/webp": return at(0, Array("RIFF".utf8)) && at(8, Array("WEBP".utf8))
        case "image/heic":
            guard at(4, Array("ftyp".utf8)), bytes.count >= 12 else { return false }
            return ["heic", "heix", "mif1", "msf1"].contains(String(decoding: bytes[8..<12], as: UTF8.self))
        default: return false
        }
    }
}
