import SurgePostgres

enum ProgressMigrations {
    static let set = MigrationSet(component: "progress", migrations: [
        Migration(1, "members", [
            """
            CREATE TABLE members (
                user_id uuid PRIMARY KEY,
                time_zone text NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now()
            )
            """,
        ]),
        Migration(2, "definitions, groups, attempts, check-ins, points, chores, photos", [
            "ALTER TABLE members ADD COLUMN daily_goal integer",
            """
            CREATE TABLE definitions (
                challenge_id uuid NOT NULL,
                version integer NOT NULL,
                effective_from date,
                kind text NOT NULL,
                owner_id uuid,
                group_id uuid,
                definition jsonb NOT NULL,
                PRIMARY KEY (challenge_id, version)
            )
            """,
            "CREATE TABLE deleted_definitions (challenge_id uuid PRIMARY KEY, deleted_at timestamptz NOT NULL)",
            "CREATE TABLE invitations (challenge_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (challenge_id, user_id))",
            "CREATE TABLE groups (group_id uuid PRIMARY KEY, name text NOT NULL, time_zone text NOT NULL)",
            "CREATE TABLE group_members (group_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (group_id, user_id))",
            "CREATE INDEX group_members_user ON group_members (user_id)",
            """
            CREATE TABLE attempts (
                attempt_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                challenge_id uuid NOT NULL,
                attempt_number integer NOT NULL,
                kind text NOT NULL,
                group_id uuid,
                started_on date NOT NULL,
                ends_on date,
                status text NOT NULL,
                state jsonb NOT NULL,
                next_judgement_at timestamptz,
                started_at timestamptz NOT NULL,
                ended_at timestamptz,
                updated_at timestamptz NOT NULL
            )
            """,
            "CREATE UNIQUE INDEX attempts_one_active ON attempts (user_id, challenge_id) WHERE status = 'active'",
            "CREATE INDEX attempts_due ON attempts (next_judgement_at) WHERE status = 'active'",
            "CREATE INDEX attempts_user ON attempts (user_id, started_at DESC, attempt_id)",
            "CREATE INDEX attempts_challenge ON attempts (challenge_id)",
            """
            CREATE TABLE attempt_days (
                attempt_id uuid NOT NULL REFERENCES attempts ON DELETE CASCADE,
                local_date date NOT NULL,
                record jsonb NOT NULL,
                outcome text,
                tasks_done integer NOT NULL DEFAULT 0,
                PRIMARY KEY (attempt_id, local_date)
            )
            """,
            """
            CREATE TABLE attempt_weeks (
                attempt_id uuid NOT NULL REFERENCES attempts ON DELETE CASCADE,
                week_start date NOT NULL,
                goal_bonus_awarded boolean NOT NULL DEFAULT false,
                challenge_bonus_awarded boolean NOT NULL DEFAULT false,
                PRIMARY KEY (attempt_id, week_start)
            )
            """,
            """
            CREATE TABLE checkins (
                checkin_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                attempt_id uuid NOT NULL REFERENCES attempts ON DELETE CASCADE,
                local_date date NOT NULL,
                task_id text NOT NULL,
                action text NOT NULL,
                done boolean,
                quantity double precision,
                rewarded_quantity double precision,
                points integer NOT NULL DEFAULT 0,
                photo_id uuid,
                happened_at timestamptz NOT NULL,
                recorded_at timestamptz NOT NULL,
                removed_by uuid
            )
            """,
            "CREATE INDEX checkins_attempt_day ON checkins (attempt_id, local_date)",
            """
            CREATE TABLE points_ledger (
                entry_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                group_id uuid,
                challenge_id uuid,
                attempt_id uuid,
                points integer NOT NULL,
                reason text NOT NULL,
                local_date date NOT NULL,
                excess_quantity double precision,
                awarded_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX points_ledger_user ON points_ledger (user_id, awarded_at DESC, entry_id)",
            "CREATE TABLE member_points (user_id uuid PRIMARY KEY, total integer NOT NULL)",
            """
            CREATE TABLE chore_occurrences (
                occurrence_id uuid PRIMARY KEY,
                chore_id uuid NOT NULL,
                group_id uuid NOT NULL,
                title text NOT NULL,
                due_on date NOT NULL,
                due_at timestamptz NOT NULL,
                assignee_id uuid,
                points integer NOT NULL,
                status text NOT NULL,
                completed_by uuid,
                completed_at timestamptz,
                overdue_at timestamptz
            )
            """,
            "CREATE UNIQUE INDEX chore_occurrences_one_pending ON chore_occurrences (chore_id) WHERE status = 'pending'",
            "CREATE INDEX chore_occurrences_group ON chore_occurrences (group_id, status, due_at, occurrence_id)",
            "CREATE INDEX chore_occurrences_coming_due ON chore_occurrences (due_at) WHERE status = 'pending' AND overdue_at IS NULL",
            """
            CREATE TABLE photos (
                photo_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                attempt_id uuid NOT NULL REFERENCES attempts ON DELETE CASCADE,
                challenge_id uuid NOT NULL,
                local_date date NOT NULL,
                task_id text NOT NULL,
                content_type text NOT NULL,
                size integer NOT NULL,
                bytes bytea NOT NULL,
                created_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX photos_attempt ON photos (attempt_id, created_at DESC, photo_id)",
            "CREATE INDEX photos_challenge ON photos (challenge_id, created_at DESC, photo_id)",
        ]),
        Migration(3, "check-in ids per user; indexes for points by day and completed chores", [
            // Check-in ids are chosen by clients: one user's cannot collide with another's.
            "ALTER TABLE checkins DROP CONSTRAINT checkins_pkey",
            "ALTER TABLE checkins ADD PRIMARY KEY (user_id, checkin_id)",
            "CREATE INDEX points_ledger_user_day ON points_ledger (user_id, local_date)",
            "CREATE INDEX chore_occurrences_completed ON chore_occurrences (group_id, completed_at DESC, occurrence_id) WHERE status = 'completed'",
        ]),
        Migration(4, "levels count only points from curated challenges; ledger rows name their check-in", [
            "ALTER TABLE points_ledger ADD COLUMN counts_toward_level boolean NOT NULL DEFAULT false",
            """
            UPDATE points_ledger l SET counts_toward_level = true
            WHERE EXISTS (SELECT 1 FROM definitions d WHERE d.challenge_id = l.challenge_id AND d.definition->>'visibility' = 'curated')
            """,
            // The check-in behind a row, so that a 0-point row (repetitions over the cap) can be explained.
            "ALTER TABLE points_ledger ADD COLUMN checkin_id uuid",
            "ALTER TABLE member_points ADD COLUMN level_points integer NOT NULL DEFAULT 0",
            """
            UPDATE member_points m SET level_points = COALESCE(
                (SELECT sum(points) FROM points_ledger l WHERE l.user_id = m.user_id AND l.counts_toward_level), 0)
            """,
        ]),
        Migration(5, "time off: pauses, vacations and skip days in the attempt's state", [
            """
            UPDATE attempts SET state = '{"pauses": [], "periodsPaused": 0}'::jsonb || state
            """,
        ]),
        // When a pending occurrence's assignee is reminded ahead of its due time; NULL once done (or for none).
        Migration(6, "chore reminders ahead of the due time", [
            "ALTER TABLE chore_occurrences ADD COLUMN remind_at timestamptz",
            "CREATE INDEX chore_occurrences_to_remind ON chore_occurrences (remind_at) WHERE status = 'pending' AND remind_at IS NOT NULL",
        ]),
    ])
}
