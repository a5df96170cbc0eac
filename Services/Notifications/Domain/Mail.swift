import Foundation
import SurgeContracts

/// An e-mail ready to send: a subject, a plain-text body and an HTML body saying the same.
public struct RenderedMail: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String

    public init(subject: String, text: String, html: String) {
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// Account mails in the user's language (English, or Italian for an `it` locale), as plain text and HTML.
public enum MailTemplates {
    /// What a mail of this kind needs beyond the address; nil when the request lacks it.
    public static func render(_ mail: AccountMail) -> RenderedMail? {
        let language = Message.Language(locale: mail.locale)
        let name = mail.displayName
        switch mail.kind {
        case .passwordReset:
            guard let link = mail.link, let minutes = mail.validForMinutes else { return nil }
            return linkMail(
                language == .italian
                    ? Parts(
                        subject: "Reimposta la password di Surge", greeting: "Ciao \(name),",
                        lead: "qualcuno (speriamo tu) ha chiesto di reimpostare la password del tuo account Surge.",
                        action: "Scegli una nuova password", validity: "Il link vale \(minutes) minuti e si può usare una volta sola.",
                        ignore: "Se non sei stato tu, ignora questa e-mail: la tua password resta quella di prima.")
                    : Parts(
                        subject: "Reset your Surge password", greeting: "Hi \(name),",
                        lead: "someone (hopefully you) asked to reset the password of your Surge account.",
                        action: "Choose a new password", validity: "The link works for \(minutes) minutes, once.",
                        ignore: "If it was not you, ignore this e-mail: your password stays as it is."),
                link: link, language: language)
        case .emailVerification:
            guard let link = mail.link, let minutes = mail.validForMinutes else { return nil }
            let hours = max(1, minutes / 60)
            return linkMail(
                language == .italian
                    ? Parts(
                        subject: "Conferma il tuo indirizzo e-mail", greeting: "Ciao \(name),",
                        lead: "conferma che questo indirizzo è tuo per usarlo con Surge (anche per reimpostare la password).",
                        action: "Conferma l'indirizzo", validity: "Il link vale \(hours) ore e si può usare una volta sola.",
                        ignore: "Se non hai chiesto tu di usare questo indirizzo, ignora questa e-mail.")
                    : Parts(
                        subject: "Confirm your e-mail address", greeting: "Hi \(name),",
                        lead: "please confirm this address is yours to use it with Surge (password resets included).",
                        action: "Confirm the address", validity: "The link works for \(hours) hours, once.",
                        ignore: "If you did not ask to use this address, ignore this e-mail."),
                link: link, language: language)
        case .emailChanged:
            guard let new = mail.newAddress else { return nil }
            let parts =
                language == .italian
                ? (subject: "Il tuo indirizzo e-mail di Surge è cambiato", greeting: "Ciao \(name),",
                    body: "l'indirizzo del tuo account Surge ora è \(new). Se non sei stato tu, scrivi subito al supporto.")
                : (subject: "Your Surge e-mail address was changed", greeting: "Hi \(name),",
                    body: "your Surge account's address is now \(new). If this was not you, contact support at once.")
            return RenderedMail(
                subject: parts.subject, text: "\(parts.greeting)\n\n\(parts.body)\n",
                html: page("<p>\(escape(parts.greeting))</p>\n<p>\(escape(parts.body))</p>", language: language))
        }
    }

    struct Parts {
        var subject, greeting, lead, action, validity, ignore: String
    }

    static func linkMail(_ parts: Parts, link: String, language: Message.Language) -> RenderedMail {
        let text = "\(parts.greeting)\n\n\(parts.lead)\n\n\(parts.action):\n\(link)\n\n\(parts.validity)\n\(parts.ignore)\n"
        let html = """
            <p>\(escape(parts.greeting))</p>
            <p>\(escape(parts.lead))</p>
            <p><a href="\(escape(link))">\(escape(parts.action))</a></p>
            <p>\(escape(parts.validity))<br>\(escape(parts.ignore))</p>
            """
        return RenderedMail(subject: parts.subject, text: text, html: page(html, language: language))
    }

    static func page(_ body: String, language: Message.Language) -> String {
        "<!DOCTYPE html>\n<html lang=\"\(language.rawValue)\"><body>\n\(body)\n</body></html>\n"
    }

    /// Text made safe inside HTML elements and attribute values.
    public static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension ProviderResponse {
    /// An HTTP e-mail API (Resend's shape): 2xx accepted, with the message's `id` when the provider names it; 429 and
    /// 5xx worth another try; any other refusal (an address the provider will not send to, a suppressed address after
    /// earlier bounces) is final and recorded.
    public static func email(status: Int, body: Data, retryAfter: TimeInterval?) -> DeliveryOutcome {
        struct Accepted: Decodable { var id: String? }
        struct ErrorBody: Decodable { var name: String? }
        if (200..<300).contains(status) {
            guard let id = (try? SurgeJSON.decode(Accepted.self, from: body))?.id, !id.isEmpty, id.utf8.count <= 200 else { return .delivered }
            return .accepted(providerMessageID: id)
        }
        switch status {
        case 429: return .retry(after: retryAfter, reason: "email-rate-limited")
        case 500...: return .retry(after: retryAfter, reason: "email-http-\(status)")
        default:
            let name = (try? SurgeJSON.decode(ErrorBody.self, from: body))?.name ?? ""
            return .failed(reason: "email-" + (name.isEmpty ? "http-\(status)" : slug(name)))
        }
    }
}
