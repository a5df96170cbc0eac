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
    ])
}
