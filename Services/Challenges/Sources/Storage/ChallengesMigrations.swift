import SurgePostgres

enum ChallengesMigrations {
    static let set = MigrationSet(component: "challenges", migrations: [
        Migration(1, "directory: users, friendships, groups and members learned from identity's events", [
            """
            CREATE TABLE users (
                user_id uuid PRIMARY KEY,
                display_name text NOT NULL,
                time_zone text NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE friendships (
                user_low uuid NOT NULL,
                user_high uuid NOT NULL,
                since timestamptz NOT NULL,
                PRIMARY KEY (user_low, user_high),
                CHECK (user_low < user_high)
            )
            """,
            "CREATE INDEX friendships_by_high ON friendships (user_high)",
            """
            CREATE TABLE groups (
                group_id uuid PRIMARY KEY,
                name text NOT NULL,
                kind text NOT NULL,
                time_zone text NOT NULL,
                owner_id uuid NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            """
            CREATE TABLE group_members (
                group_id uuid NOT NULL,
                user_id uuid NOT NULL,
                role text NOT NULL,
                joined_at timestamptz NOT NULL,
                PRIMARY KEY (group_id, user_id)
            )
            """,
            "CREATE INDEX group_members_by_user ON group_members (user_id)",
        ]),
        Migration(2, "challenges, versions, invitations, likes, activity", [
            // One row per definition: who owns it, who may see it, its latest version, and what browsing filters,
            // searches and sorts by. The definitions themselves live whole in challenge_versions.
            """
            CREATE TABLE challenges (
                challenge_id uuid PRIMARY KEY,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                kind text NOT NULL,
                visibility text NOT NULL,
                owner_id uuid,
                group_id uuid,
                latest_version integer NOT NULL,
                name text NOT NULL,
                description text NOT NULL,
                category text NOT NULL,
                difficulty text NOT NULL,
                duration_days integer,
                likes_count integer NOT NULL DEFAULT 0 CHECK (likes_count >= 0),
                trending_score integer NOT NULL DEFAULT 0,
                content_version integer,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                search tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('english', name), 'A')
                    || setweight(to_tsvector('english', description), 'B')
                    || setweight(to_tsvector('english', category), 'C')
                ) STORED
            )
            """,
            "CREATE UNIQUE INDEX challenges_newest ON challenges (seq DESC)",
            // Definitions are written rarely and searched constantly: index each write at once rather than through
            // GIN's pending list, which the planner counts against the index until a vacuum merges it.
            "CREATE INDEX challenges_search ON challenges USING gin (search) WITH (fastupdate = off)",
            "CREATE INDEX challenges_liked ON challenges (likes_count DESC, challenge_id DESC)",
            "CREATE INDEX challenges_trending ON challenges (trending_score DESC, challenge_id DESC)",
            "CREATE INDEX challenges_by_kind ON challenges (kind, seq DESC)",
            "CREATE INDEX challenges_by_difficulty ON challenges (difficulty, seq DESC)",
            "CREATE INDEX challenges_by_category ON challenges (category, seq DESC)",
            "CREATE INDEX challenges_by_duration ON challenges (duration_days, seq DESC)",
            "CREATE INDEX challenges_by_owner ON challenges (owner_id, seq DESC)",
            "CREATE INDEX challenges_by_group ON challenges (group_id, seq DESC) WHERE group_id IS NOT NULL",
            "CREATE INDEX challenges_trending_active ON challenges (challenge_id) WHERE trending_score > 0",
            """
            CREATE TABLE challenge_versions (
                challenge_id uuid NOT NULL REFERENCES challenges ON DELETE CASCADE,
                version integer NOT NULL CHECK (version >= 1),
                effective_from date,
                definition jsonb NOT NULL,
                created_at timestamptz NOT NULL,
                created_by uuid,
                PRIMARY KEY (challenge_id, version)
            )
            """,
            """
            CREATE TABLE invitations (
                invitation_id uuid PRIMARY KEY,
                challenge_id uuid NOT NULL REFERENCES challenges ON DELETE CASCADE,
                inviter_id uuid,
                invitee_id uuid NOT NULL,
                group_id uuid,
                sent_at timestamptz NOT NULL,
                UNIQUE (invitee_id, challenge_id)
            )
            """,
            "CREATE INDEX invitations_by_challenge ON invitations (challenge_id)",
            """
            CREATE TABLE likes (
                challenge_id uuid NOT NULL REFERENCES challenges ON DELETE CASCADE,
                user_id uuid NOT NULL,
                liked_at timestamptz NOT NULL,
                PRIMARY KEY (challenge_id, user_id)
            )
            """,
            "CREATE INDEX likes_by_user ON likes (user_id)",
            // Joins (progress's AttemptStarted) and likes per challenge per UTC day: what "trending" sums over the last
            // seven days.
            """
            CREATE TABLE challenge_activity (
                challenge_id uuid NOT NULL REFERENCES challenges ON DELETE CASCADE,
                day date NOT NULL,
                joins integer NOT NULL DEFAULT 0,
                likes integer NOT NULL DEFAULT 0,
                PRIMARY KEY (challenge_id, day)
            )
            """,
            "CREATE INDEX challenge_activity_by_day ON challenge_activity (day)",
        ]),
    ])
}
