import Foundation
import NotificationsDomain
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Notifications: account mail templates and provider answers", .tags(.unit), .kind(.unit))
struct MailTemplateTests {
    let link = "https://surge.example/reset-password#token=abc_DEF-123"

    func mail(_ kind: AccountMail.Kind, locale: String?, name: String = "Ann") -> AccountMail {
        AccountMail(
            mailID: UUID(), kind: kind, to: "ann@example.com", displayName: name, locale: locale, link: kind == .emailChanged ? nil : link,
            validForMinutes: kind == .emailChanged ? nil : 30, newAddress: kind == .emailChanged ? "an***@example.org" : nil)
    }

    @Test("each kind in English and Italian, plain text and HTML, with the link in both")
    func languages() throws {
        for kind in AccountMail.Kind.allCases {
            let english = try #require(MailTemplates.render(mail(kind, locale: "en-GB")))
            let italian = try #require(MailTemplates.render(mail(kind, locale: "it-IT")))
            #expect(english.subject != italian.subject)
            #expect(english.html.contains("<html lang=\"en\">") && italian.html.contains("<html lang=\"it\">"))
            if kind != .emailChanged {
                #expect(english.text.contains(link) && english.html.contains("href=\"\(link)\""))
                #expect(italian.text.contains(link) && italian.html.contains("href=\"\(link)\""))
            } else {
                #expect(english.text.contains("an***@example.org") && italian.text.contains("an***@example.org"))
            }
        }
        #expect(try #require(MailTemplates.render(mail(.passwordReset, locale: "it"))).text.contains("30 minuti"))
        #expect(try #require(MailTemplates.render(mail(.passwordReset, locale: nil))).subject == "Reset your Surge password")
    }

    @Test("a name is escaped in HTML; a link mail without its link is not rendered")
    func safety() throws {
        let rendered = try #require(MailTemplates.render(mail(.emailVerification, locale: nil, name: "<script>alert('x')</script>")))
        #expect(!rendered.html.contains("<script>") && rendered.html.contains("&lt;script&gt;"))
        var broken = mail(.passwordReset, locale: nil)
        broken.link = nil
        #expect(MailTemplates.render(broken) == nil)
    }

    @Test("provider answers: accepted, retried, refused for good")
    func outcomes() {
        #expect(ProviderResponse.email(status: 200, body: Data(), retryAfter: nil) == .delivered)
        #expect(
            ProviderResponse.email(status: 200, body: Data(#"{"id":"49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"}"#.utf8), retryAfter: nil)
                == .accepted(providerMessageID: "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"), "the provider's id is kept to match its bounce reports")
        #expect(ProviderResponse.email(status: 429, body: Data(), retryAfter: 5) == .retry(after: 5, reason: "email-rate-limited"))
        #expect(ProviderResponse.email(status: 503, body: Data(), retryAfter: nil) == .retry(after: nil, reason: "email-http-503"))
        #expect(
            ProviderResponse.email(status: 422, body: Data(#"{"name":"validation_error","message":"bad to"}"#.utf8), retryAfter: nil)
                == .failed(reason: "email-validation-error"))
        #expect(ProviderResponse.email(status: 403, body: Data(), retryAfter: nil) == .failed(reason: "email-http-403"))
    }
}
