import SurgeRuntime

/// The public operations identity answers.
enum IdentityAPI {
    static let registerGuest = APIOperation(
        .post, "/v1/auth/guest", id: "registerGuest", service: .identity,
        summary: "Create a guest account with a display name only (offline-first apps); credentials can be attached later.",
        access: .anonymous, throttle: .credentials, request: AuthController<PostgresAccountRepository>.GuestRequest.self,
        status: .created, response: AuthController<PostgresAccountRepository>.SessionResponse.self)

    static let me = APIOperation(
        .get, "/v1/me", id: "getMe", service: .identity, summary: "The caller's account.",
        response: AccountController<PostgresAccountRepository>.AccountResponse.self)

    static let all = [registerGuest, me]
}
