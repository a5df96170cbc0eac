import SurgeAuth
import Synchronization

/// The access-token issuer, filled in by startup. Outside production without `JWT_SIGNING_KEY` its key lives in
/// identity's own database, so it is read as a startup step (after the migrations, before the server listens) rather
/// than while the application is built.
final class IssuerSlot: Sendable {
    struct Empty: Error, CustomStringConvertible {
        var description: String { "the access-token issuer is used before startup made it" }
    }

    private let issuer: Mutex<AccessTokenIssuer?>

    init(_ issuer: AccessTokenIssuer? = nil) {
        self.issuer = Mutex(issuer)
    }

    func fill(_ issuer: AccessTokenIssuer) {
        self.issuer.withLock { $0 = issuer }
    }

    func current() throws -> AccessTokenIssuer {
        guard let issuer = issuer.withLock({ $0 }) else { throw Empty() }
        return issuer
    }
}
