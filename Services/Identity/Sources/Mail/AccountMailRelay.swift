import AsyncHTTPClient
import Foundation
import IdentityDomain
import Logging
import NIOCore
import SurgeContracts
import SurgePostgres
import SurgeRuntime

/// Turns queued mail requests into mails and hands them to the notification service. The token a mail carries is made
/// and stored (selector and verifier hash; the raw token is never written anywhere here) in a transaction that also
/// claims the request for `claimLease`, and that commits before the hand-over: a link opened the moment its mail
/// arrives finds its token. A failed hand-over deletes the token and tries again later with a fresh one; a relay that
/// stops between the hand-over and marking the request handled leaves it to be sent again once the lease ends.
///
/// What a request becomes is decided here, after the caller was answered, so the answer to "reset my password" does
/// not depend on whether the address has an account:
/// - password reset, no password account with that address: nothing is sent.
/// - password reset, address not verified: a verification link instead of a reset link (a reset goes only to an
///   address proven to be the owner's); once verified, the owner asks again.
/// - verification: sent while the address is still the account's unverified one or the one a change waits for.
/// - address changed: a notice to the old address, naming the new one masked.
struct AccountMailRelay: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock
    let lifetimes: AccountTokenLifetimes
    let links: MailLinks
    let handOver: @Sendable (AccountMail) async throws -> Void

    /// With the backoff below, about half an hour: after that a reset link would be near its end anyway.
    static let maxAttempts = 12

    /// Longer than a hand-over may take (its HTTP timeout is 10 s): no other replica takes the request meanwhile.
    static let claimLease: TimeInterval = 60

    /// A claimed request, with the mail to hand over (nil: nothing to send) and the selector of the token it carries.
    private struct Claimed {
        var id: UUID
        var attempts: Int
        var mail: AccountMail?
        var tokenSelector: Data?
    }

    /// Handles every request due now; returns how many.
    @discardableResult
    func sendDue() async throws -> Int {
        var handled = 0
        while try await handleOne() { handled += 1 }
        return handled
    }

    private var logger: Logger { storage.logger }

    private func handleOne() async throws -> Bool {
        let now = clock.now()
        let claimed = try await storage.transaction { stores -> Claimed? in
            guard let request = try await stores.mail.nextDueRequest(at: now) else { return nil }
            let id = request.id
            guard let kind = request.kind,
                let (mail, selector) = try await compose(
                    kind, to: request.email, userID: request.userID, detail: request.detail, mailID: id, now: now, in: stores)
            else {
                try await stores.mail.markNothingToSend(id, at: now)
                return Claimed(id: id, attempts: request.attempts)
            }
            try await stores.mail.lease(id, until: now.addingTimeInterval(Self.claimLease))
            return Claimed(id: id, attempts: request.attempts, mail: mail, tokenSelector: selector)
        }
        guard let claimed else { return false }
        guard let mail = claimed.mail else {
            logger.info("Account mail handled", metadata: ["request": "\(claimed.id)", "outcome": "nothing-to-send"])
            return true
        }
        do {
            try await handOver(mail)
        } catch {
            // Only the error's kind or status: an error's text could quote the request, token and all.
            let reason = (error as? NotificationsMailClient.Refused).map { "http-\($0.status)" } ?? "\(type(of: error))"
            let attempts = claimed.attempts + 1
            let backoff = min(300, pow(2, Double(attempts - 1)))
            let givingUp = attempts >= Self.maxAttempts
            // In one transaction: the token the mail carried is deleted, and the request waits or is given up.
            try await storage.transaction { stores in
                if let selector = claimed.tokenSelector { try await stores.mail.deleteToken(selector: selector) }
                try await stores.mail.markHandOverFailed(
                    claimed.id, attempts: attempts, nextAttemptAt: now.addingTimeInterval(backoff), givingUp: givingUp, at: now)
            }
            logger.warning("Account mail not handed over", metadata: ["request": "\(claimed.id)", "attempt": "\(attempts)", "reason": "\(reason)"])
            // The notification service is not taking mail: the next round tries again.
            return false
        }
        try await storage.read { stores in try await stores.mail.markHandedOver(claimed.id, as: mail.kind, at: now) }
        logger.info("Account mail handled", metadata: ["request": "\(claimed.id)", "outcome": "\(mail.kind.rawValue)"])
        return true
    }

    private func compose(
        _ kind: AccountMail.Kind, to email: String, userID: UUID?, detail: String?, mailID: UUID, now: Date, in stores: IdentityStores
    ) async throws -> (AccountMail, tokenSelector: Data?)? {
        switch kind {
        case .passwordReset:
            guard let account = try await stores.accounts.passwordRecipient(email: email) else { return nil }
            let purpose: AccountTokenPurpose = account.verified ? .passwordReset : .emailVerification
            return try await mail(
                purpose, mailID: mailID, userID: account.userID, to: email, name: account.name, locale: account.locale, now: now, in: stores)
        case .emailVerification:
            guard let userID else { return nil }
            guard let recipient = try await stores.accounts.recipientAwaitingVerification(userID, email: email) else { return nil }
            return try await mail(
                .emailVerification, mailID: mailID, userID: userID, to: email, name: recipient.name, locale: recipient.locale, now: now, in: stores)
        case .emailChanged:
            guard let userID else { return nil }
            guard let recipient = try await stores.accounts.recipient(userID) else { return nil }
            return (
                AccountMail(mailID: mailID, kind: .emailChanged, to: email, displayName: recipient.name, locale: recipient.locale, newAddress: detail),
                nil
            )
        }
    }

    /// Makes a token for the mail and stores its selector and verifier hash; returns the mail and the selector.
    private func mail(
        _ purpose: AccountTokenPurpose, mailID: UUID, userID: UUID, to email: String, name: String, locale: String?, now: Date,
        in stores: IdentityStores
    ) async throws -> (AccountMail, tokenSelector: Data?) {
        let token = AccountToken.generate()
        let lifetime = lifetimes.lifetime(of: purpose)
        try await stores.mail.storeToken(token, purpose: purpose, userID: userID, to: email, at: now, expiresAt: now.addingTimeInterval(lifetime))
        let kind: AccountMail.Kind = purpose == .passwordReset ? .passwordReset : .emailVerification
        let mail = AccountMail(
            mailID: mailID, kind: kind, to: email, displayName: name, locale: locale, link: links.link(purpose, token: token),
            validForMinutes: Int(lifetime / 60))
        return (mail, Data(token.selector))
    }
}

/// Where mailed links point; the token follows the base. The defaults put it in the fragment (`#token=`), which a
/// browser never sends to the web server, so it stays out of that server's access logs.
struct MailLinks: Sendable {
    var passwordReset: String
    var emailVerification: String

    func link(_ purpose: AccountTokenPurpose, token: AccountToken) -> String {
        (purpose == .passwordReset ? passwordReset : emailVerification) + token.text
    }
}

/// Hands a mail to the notification service: `POST /internal/mail`, signed like the gateway's calls
/// (`InternalCallSigner`), with no caller. The body carries the link and its token, over the internal network only.
struct NotificationsMailClient: Sendable {
    let baseURL: String
    let signer: InternalCallSigner

    struct Refused: Error {
        var status: Int
    }

    func handOver(_ mail: AccountMail) async throws {
        var request = HTTPClientRequest(url: baseURL + AccountMail.path)
        request.method = .POST
        let requestID = UUID().key
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: InternalHeaders.requestID.rawName, value: requestID)
        let body = try SurgeJSON.apiEncode(mail)
        request.headers.add(
            name: InternalCallSigner.header.rawName,
            value: signer.signature(
                method: "POST", target: AccountMail.path, caller: nil, requestID: requestID, body: InternalCallSigner.BodyDigest(of: body)))
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(Int(response.status.code)) else { throw Refused(status: Int(response.status.code)) }
    }
}
