import SurgePostgres

/// The badge service's tables: what it learned from identity (users, friendships, group members), the facts kept
/// per user (counts and best streaks), the awards, the catalogue badges already backfilled, what it keeps of each
/// challenge (its kind, the badges it names of its own, and who may see them) and who joined which challenge.
enum BadgesMigrations {
    static let set = MigrationSet(component: "badges", migrations: [
        Migration(1, "users, facts, awards, catalogue", [
            "CREATE TABLE users (user_id uuid PRIMARY KEY)",
            "CREATE TABLE erased_users (user_id uuid PRIMARY KEY)",
            "CREATE TABLE friendships (user_low uuid NOT NULL, user_high uuid NOT NULL, PRIMARY KEY (user_low, user_high))",
            "CREATE INDEX friendships_high ON friendships (user_high)",
            "CREATE TABLE group_members (group_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (group_id, user_id))",
            "CREATE INDEX group_members_user ON group_members (user_id)",
            """
            CREATE TABLE facts (
                user_id uuid NOT NULL,
                name text NOT NULL,
                scope text NOT NULL,
                value bigint NOT NULL,
                PRIMARY KEY (user_id, name, scope)
            )
            """,
            "CREATE INDEX facts_by_name ON facts (name, scope, value)",
            """
            CREATE TABLE awards (
                user_id uuid NOT NULL,
                badge_id text NOT NULL,
                level integer NOT NULL,
                period text NOT NULL,
                title text NOT NULL,
                awarded_at timestamptz NOT NULL,
                backfilled boolean NOT NULL DEFAULT false,
                PRIMARY KEY (user_id, badge_id, level, period)
            )
            """,
            "CREATE INDEX awards_by_badge ON awards (badge_id, level)",
            // The catalogue's badges as last backfilled: a new or changed one is backfilled at start.
            "CREATE TABLE catalogue_badges (badge_id text PRIMARY KEY, fingerprint text NOT NULL)",
        ]),
        Migration(2, "challenges: kind and own badges", [
            // Each challenge's latest version: its kind (a weekly challenge's bonus earns the week's badge) and the
            // badges it names of its own, as the definition lists them.
            "CREATE TABLE challenges (challenge_id uuid PRIMARY KEY, version integer NOT NULL, kind text NOT NULL, badges jsonb NOT NULL)",
        ]),
        Migration(3, "challenges: who may see them; participants", [
            // Who may see a challenge's own badges (ChallengeAccess). A challenge kept before this migration has no
            // visibility until its next version arrives: until then only its participants see its badges.
            "ALTER TABLE challenges ADD COLUMN visibility text, ADD COLUMN owner_id uuid, ADD COLUMN group_id uuid",
            "ALTER TABLE challenges ADD COLUMN deleted boolean NOT NULL DEFAULT false",
            // Who joined a challenge (an attempt started, a chore of it completed): their locked badges list its own.
            """
            CREATE TABLE participants (
                challenge_id uuid NOT NULL,
                user_id uuid NOT NULL,
                PRIMARY KEY (challenge_id, user_id)
            )
            """,
            "CREATE INDEX participants_user ON participants (user_id)",
            // Those who joined before this migration: whoever has a fact or an award in the challenge.
            """
            INSERT INTO participants (challenge_id, user_id)
            SELECT substring(scope FROM 11)::uuid, user_id FROM facts WHERE scope LIKE 'challenge:%'
            UNION
            SELECT split_part(badge_id, ':', 2)::uuid, user_id FROM awards WHERE badge_id LIKE 'challenge:%'
            ON CONFLICT DO NOTHING
            """,
        ]),
        Migration(4, "facts change in place: their index leaves the value out", [
            // Every check-in changes two or three facts' values. With the value in an index each change wrote a new row
            // version and an entry in both indexes; without it PostgreSQL updates the row in its page (a HOT update).
            // The index serves a challenge's own badges' backfill (`users(with:atLeast:)`), which reads a fact's rows.
            "DROP INDEX facts_by_name",
            "CREATE INDEX facts_by_fact ON facts (name, scope)",
        ]),
    ])
}
