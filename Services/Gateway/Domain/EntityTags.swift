/// The entity-tag comparisons of RFC 9110 §8.8.3 and §13.1, on header values as sent: a list of quoted tags, each
/// perhaps weak (`W/"…"`), or `*`.
public enum EntityTags {
    /// `If-None-Match`: true (answer 304) when any listed tag matches `current` weakly, or the list is `*`.
    public static func noneMatchFails(_ header: String, current: String) -> Bool {
        let tags = list(header)
        return tags.contains("*") || tags.contains { opaque($0) == opaque(current) }
    }

    /// `If-Match`: true when the list is `*` or names `current` strongly (a weak tag never matches).
    public static func matches(_ header: String, current: String) -> Bool {
        let tags = list(header)
        return tags.contains("*") || tags.contains { !$0.hasPrefix("W/") && $0 == current }
    }

    private static func list(_ header: String) -> [Substring] {
        header.split(separator: ",").map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
    }

    private static func opaque(_ tag: some StringProtocol) -> Substring {
        let tag = Substring(tag)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}

extension Substring {
    /// Without the spaces and tabs around it (optional whitespace, RFC 9110 §5.6.3).
    fileprivate func trimmingBlanks() -> Substring {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        return drop(while: isBlank).reversed().drop(while: isBlank).reversed().reduce(into: Substring()) { $0.append($1) }
    }
}
