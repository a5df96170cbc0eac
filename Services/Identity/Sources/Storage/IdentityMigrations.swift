import SurgePostgres

enum IdentityMigrations {
    static let set = MigrationSet(component: "identity", migrations: [
        Migration(1, "users", [
            """
            CREATE TABLE users (
                id uuid PRIMARY KEY,
                display_name text NOT NULL,
                time_zone text NOT NULL,
                locale text,
                kind text NOT NULL,
                created_at timestamptz NOT NULL
            )
            """,
        ]),
        Migration(2, "credentials, sessions, preferences, training plans, friends, groups", [
            """
            ALTER TABLE users
                ADD COLUMN avatar_url text,
                ADD COLUMN email text,
                ADD COLUMN updated_at timestamptz
            """,
            // Addresses are stored normalised; the index on lower() keeps them unique case-insensitively all the same.
            "CREATE UNIQUE INDEX users_email_key ON users (lower(email))",
            "CREATE INDEX users_display_name ON users (lower(display_name), id)",
            """
            CREATE TABLE password_credentials (
                user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                password_hash text NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE social_identities (
                provider text NOT NULL,
                subject text NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                email text,
                linked_at timestamptz NOT NULL,
                PRIMARY KEY (provider, subject)
            )
            """,
            "CREATE INDEX social_identities_user ON social_identities (user_id)",
            """
            CREATE TABLE refresh_tokens (
                id uuid PRIMARY KEY,
                token_hash bytea NOT NULL UNIQUE,
                family_id uuid NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                issued_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                used_at timestamptz,
                revoked_at timestamptz
            )
            """,
            "CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)",
            "CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id)",
            """
            CREATE TABLE sign_in_failures (
                id uuid PRIMARY KEY,
                email text NOT NULL,
                failed_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX sign_in_failures_email ON sign_in_failures (email, failed_at)",
            "CREATE INDEX sign_in_failures_time ON sign_in_failures (failed_at)",
            """
            CREATE TABLE preferences (
                user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                notifications_enabled boolean NOT NULL,
                daily_reminder_time text,
                quiet_hours_start text,
                quiet_hours_end text,
                telemetry_opt_out boolean NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE training_plans (
                user_id uuid PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
                activity_level text NOT NULL,
                max_push_ups_in_one_set integer NOT NULL,
                days_per_week integer NOT NULL,
                daily_goal integer NOT NULL,
                starting_series integer NOT NULL,
                recovery_seconds integer NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            // Pending requests only; at most one per pair of users, whoever asked.
            """
            CREATE TABLE friend_requests (
                id uuid PRIMARY KEY,
                seq bigserial NOT NULL,
                requester_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                addressee_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL,
                CHECK (requester_id <> addressee_id)
            )
            """,
            "CREATE UNIQUE INDEX friend_requests_pair ON friend_requests (LEAST(requester_id, addressee_id), GREATEST(requester_id, addressee_id))",
            "CREATE INDEX friend_requests_addressee ON friend_requests (addressee_id, seq)",
            "CREATE INDEX friend_requests_requester ON friend_requests (requester_id, seq)",
            // One row per direction, so "my friends" is one index range.
            """
            CREATE TABLE friendships (
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                friend_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                requester_id uuid NOT NULL,
                since timestamptz NOT NULL,
                PRIMARY KEY (user_id, friend_id)
            )
            """,
            """
            CREATE TABLE groups (
                id uuid PRIMARY KEY,
                name text NOT NULL,
                kind text NOT NULL,
                time_zone text NOT NULL,
                owner_id uuid NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE group_members (
                group_id uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                role text NOT NULL,
                seq bigserial NOT NULL,
                joined_at timestamptz NOT NULL,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_user ON group_members (user_id, seq)",
            "CREATE INDEX group_members_group ON group_members (group_id, seq)",
            """
            CREATE TABLE group_invites (
                code text PRIMARY KEY,
                group_id uuid NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
                created_by uuid REFERENCES users (id) ON DELETE SET NULL,
                seq bigserial NOT NULL,
                created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                revoked_at timestamptz
            )
            """,
            "CREATE INDEX group_invites_group ON group_invites (group_id, seq)",
        ]),
        // Outside production without JWT_SIGNING_KEY: the one key every replica signs with, kept across restarts.
        Migration(3, "development signing key", [
            """
            CREATE TABLE development_signing_key (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                key_id text NOT NULL,
                seed text NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        // Sign-in failures per (e-mail, source). The default keeps replicas of the previous version working during a
        // rolling upgrade: their failures count as the unknown source's.
        Migration(4, "sign-in failures per source", [
            "ALTER TABLE sign_in_failures ADD COLUMN source text NOT NULL DEFAULT ''",
            "CREATE INDEX sign_in_failures_pair ON sign_in_failures (email, source, failed_at)",
            "CREATE INDEX sign_in_failures_source ON sign_in_failures (source, failed_at)",
        ]),
        Migration(5, "account recovery: verified addresses, mailed tokens, mail requests, sessions", [
            // An address change waits in pending_email until the new address is verified.
            "ALTER TABLE users ADD COLUMN email_verified_at timestamptz, ADD COLUMN pending_email text",
            // An address a social provider vouched for is verified already.
            """
            UPDATE users u SET email_verified_at = u.created_at
            WHERE u.email IS NOT NULL AND EXISTS (SELECT 1 FROM social_identities s WHERE s.user_id = u.id AND lower(s.email) = lower(u.email))
            """,
            // Only the selector and a hash of the verifier: the mailed token itself is never stored here.
            """
            CREATE TABLE account_tokens (
                selector bytea PRIMARY KEY,
                verifier_hash bytea NOT NULL,
                purpose text NOT NULL,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                email text NOT NULL,
                created_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                used_at timestamptz
            )
            """,
            "CREATE INDEX account_tokens_user ON account_tokens (user_id, purpose)",
            "CREATE INDEX account_tokens_expiry ON account_tokens (expires_at)",
            // Mails to send about an account, and the log the request throttle counts. No token is ever in a row: the
            // relay makes it when it hands the mail over.
            """
            CREATE TABLE mail_requests (
                id uuid PRIMARY KEY,
                kind text NOT NULL,
                email text NOT NULL,
                user_id uuid REFERENCES users (id) ON DELETE CASCADE,
                source text NOT NULL DEFAULT '',
                detail text,
                requested_at timestamptz NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL,
                handled_at timestamptz,
                outcome text
            )
            """,
            "CREATE INDEX mail_requests_due ON mail_requests (next_attempt_at) WHERE handled_at IS NULL",
            "CREATE INDEX mail_requests_email ON mail_requests (email, requested_at)",
            "CREATE INDEX mail_requests_source ON mail_requests (source, requested_at)",
            // One row per refresh-token family: the device a user sees in their session list.
            """
            CREATE TABLE sessions (
                family_id uuid PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                name text NOT NULL,
                created_at timestamptz NOT NULL,
                last_used_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX sessions_user ON sessions (user_id, created_at)",
            """
            INSERT INTO sessions (family_id, user_id, name, created_at, last_used_at)
            SELECT family_id, user_id, 'Unknown device', min(issued_at), max(issued_at) FROM refresh_tokens GROUP BY family_id, user_id
            """,
        ]),
        Migration(6, "notification categories switched off", [
            "ALTER TABLE preferences ADD COLUMN disabled_categories text[] NOT NULL DEFAULT '{}'"
        ]),
        // Granted and revoked only by an operator (`surge-admin grant-admin|revoke-admin`), never through the API; read
        // whenever an access token is issued, which carries it as the `roles` claim.
        Migration(7, "admin role on accounts", [
            "ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false"
        ]),
        // Device tokens (`SignInThrottle`: a known device is exempt from the limits across sources), kept as hashes.
        Migration(8, "known devices", [
            """
            CREATE TABLE known_devices (
                token_hash bytea PRIMARY KEY,
                user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                issued_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL,
                failures integer NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX known_devices_user ON known_devices (user_id)",
            "CREATE INDEX known_devices_expiry ON known_devices (expires_at)",
        ]),
    ])
}
