/// The replicas of one upstream service and the order to try them in: round-robin, except that a replica which
/// recently refused a connection goes to the back of the order until its quarantine ends.
///
/// Behind a load balancer (a Kubernetes Service, Compose's DNS) there is one URL and this changes nothing; with
/// several URLs (processes started side by side, as `make test` does) the gateway spreads and fails over by itself.
public struct ReplicaSet: Sendable, Equatable {
    public let urls: [String]
    private var next = 0
    private var refusedUntil: [ContinuousClock.Instant?]

    /// `list` is one base URL or several, comma-separated; a trailing slash is dropped. Nil when one is not an
    /// http(s) URL or the list is empty.
    public init?(list: String) {
        let urls = list.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
            .map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else { return nil }
        self.urls = urls
        self.refusedUntil = Array(repeating: nil, count: urls.count)
    }

    /// Every replica, in the order this request should try them; each call starts one further round.
    public mutating func order(at now: ContinuousClock.Instant) -> [String] {
        let start = next
        next = (next + 1) % urls.count
        let rotated = (0..<urls.count).map { (start + $0) % urls.count }
        let healthy = rotated.filter { refusedUntil[$0].map { $0 <= now } ?? true }
        let quarantined = rotated.filter { !healthy.contains($0) }
        return (healthy + quarantined).map { urls[$0] }
    }

    /// `url` refused a connection at `now`: try it last until `quarantine` has passed.
    public mutating func refused(_ url: String, at now: ContinuousClock.Instant, quarantine: Duration) {
        guard let index = urls.firstIndex(of: url) else { return }
        refusedUntil[index] = now + quarantine
    }
}
