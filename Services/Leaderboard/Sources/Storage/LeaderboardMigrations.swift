import SurgePostgres

/// The leaderboard's tables: what it learned from other services' events (profiles, groups, friendships,
/// challenges, participants) and the scores of every board window, kept as history.
enum LeaderboardMigrations {
    static let set = MigrationSet(component: "leaderboard", migrations: [
        Migration(1, "projections, scores per board window, closed windows", [
            "CREATE TABLE profiles (user_id uuid PRIMARY KEY, display_name text NOT NULL, avatar_url text, time_zone text NOT NULL)",
            "CREATE TABLE erased_users (user_id uuid PRIMARY KEY)",
            "CREATE TABLE groups (group_id uuid PRIMARY KEY, name text NOT NULL, time_zone text NOT NULL)",
            "CREATE TABLE group_members (group_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (group_id, user_id))",
            "CREATE INDEX group_members_user ON group_members (user_id)",
            "CREATE TABLE friendships (user_low uuid NOT NULL, user_high uuid NOT NULL, PRIMARY KEY (user_low, user_high))",
            "CREATE INDEX friendships_high ON friendships (user_high)",
            """
            CREATE TABLE challenges (
                challenge_id uuid PRIMARY KEY,
                name text NOT NULL,
                kind text NOT NULL,
                visibility text NOT NULL,
                owner_id uuid,
                group_id uuid,
                unit text
            )
            """,
            "CREATE TABLE invitations (challenge_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (challenge_id, user_id))",
            "CREATE TABLE participants (challenge_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (challenge_id, user_id))",
            "CREATE INDEX participants_user ON participants (user_id)",
            // One row per board window; `version` grows with every change so replicas catch up on the rows changed since.
            """
            CREATE TABLE boards (
                board text NOT NULL,
                window_key text NOT NULL,
                version bigint NOT NULL,
                PRIMARY KEY (board, window_key)
            )
            """,
            """
            CREATE TABLE scores (
                board text NOT NULL,
                window_key text NOT NULL,
                user_id uuid NOT NULL,
                score double precision NOT NULL,
                removed boolean NOT NULL DEFAULT false,
                version bigint NOT NULL,
                PRIMARY KEY (board, window_key, user_id)
            )
            """,
            "CREATE INDEX scores_changes ON scores (board, window_key, version)",
            "CREATE INDEX scores_user ON scores (user_id)",
            """
            CREATE TABLE closed_windows (
                board text NOT NULL,
                window_key text NOT NULL,
                revision integer NOT NULL,
                board_version bigint NOT NULL,
                closed_at timestamptz NOT NULL,
                PRIMARY KEY (board, window_key)
            )
            """,
        ]),
        Migration(2, "a group's zone change applies from the next week", [
            "ALTER TABLE groups ADD COLUMN next_time_zone text, ADD COLUMN zone_changes_at timestamptz",
        ]),
    ])
}
