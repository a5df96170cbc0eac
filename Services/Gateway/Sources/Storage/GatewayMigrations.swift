import SurgePostgres

enum GatewayMigrations {
    static let set = MigrationSet(component: "gateway", migrations: [
        Migration(1, "idempotency keys", [
            """
            CREATE TABLE idempotency_keys (
                scope text NOT NULL,
                key text NOT NULL,
                fingerprint bytea NOT NULL,
                status integer,
                content_type text,
                location text,
                body bytea,
                started_at timestamptz NOT NULL,
                completed_at timestamptz,
                PRIMARY KEY (scope, key)
            )
            """,
            "CREATE INDEX idempotency_keys_age ON idempotency_keys (started_at)",
        ]),
        Migration(2, "erased users", [
            "CREATE TABLE erased_users (user_id uuid PRIMARY KEY, erased_at timestamptz NOT NULL)",
            "CREATE INDEX erased_users_age ON erased_users (erased_at)",
        ]),
        Migration(3, "stream tickets", [
            "CREATE TABLE stream_tickets (ticket_hash bytea PRIMARY KEY, user_id uuid NOT NULL, expires_at timestamptz NOT NULL, used_at timestamptz)",
            "CREATE INDEX stream_tickets_expiry ON stream_tickets (expires_at)",
        ]),
        Migration(4, "revoked sessions", [
            "CREATE TABLE revoked_sessions (session_id uuid PRIMARY KEY, user_id uuid NOT NULL, revoked_at timestamptz NOT NULL)",
            "CREATE INDEX revoked_sessions_age ON revoked_sessions (revoked_at)",
        ]),
        // The session of the token a ticket was issued to: the stream it opens ends when that session is revoked.
        Migration(5, "stream tickets name their session", [
            "ALTER TABLE stream_tickets ADD COLUMN session_id uuid"
        ]),
        // Each service keeps the first answer to a key with its command (`IdempotentRequestMiddleware`); the gateway's
        // copy cost every keyed command two transactions more and decided nothing the service does not.
        Migration(6, "idempotency keys are the services'", [
            "DROP TABLE idempotency_keys"
        ]),
    ])
}
