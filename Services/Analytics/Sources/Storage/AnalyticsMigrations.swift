import SurgePostgres

/// The analytics projection: facts per user (no names, no e-mail, no free text), from which the KPIs are computed
/// (`KPIQueries`). Versions only grow; an applied migration is never edited.
enum AnalyticsMigrations {
    static let set = MigrationSet(component: "analytics", migrations: [
        Migration(1, "facts behind the KPIs", [
            """
            CREATE TABLE users (
                user_id uuid PRIMARY KEY,
                time_zone text NOT NULL,
                registered_at timestamptz NOT NULL,
                cohort_date date NOT NULL
            )
            """,
            "CREATE INDEX users_by_cohort ON users (cohort_date)",
            // The instants of the user's own actions: sessions and active days are derived from them.
            """
            CREATE TABLE activity (
                user_id uuid NOT NULL,
                at timestamptz NOT NULL,
                PRIMARY KEY (user_id, at)
            )
            """,
            """
            CREATE TABLE attempts (
                attempt_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                started_at timestamptz,
                ended_on date,
                ended_at timestamptz,
                outcome text CHECK (outcome IN ('failed', 'completed', 'abandoned')),
                restarted_at timestamptz
            )
            """,
            "CREATE INDEX attempts_by_user ON attempts (user_id)",
            "CREATE INDEX attempts_by_end ON attempts (ended_on)",
            // Days an attempt expected work (judged completed, missed, frozen or kept).
            """
            CREATE TABLE active_days (
                attempt_id uuid NOT NULL,
                local_date date NOT NULL,
                user_id uuid NOT NULL,
                at timestamptz NOT NULL,
                PRIMARY KEY (attempt_id, local_date)
            )
            """,
            "CREATE INDEX active_days_by_date ON active_days (local_date, user_id)",
            "CREATE INDEX active_days_by_user ON active_days (user_id)",
            """
            CREATE TABLE check_in_days (
                user_id uuid NOT NULL,
                local_date date NOT NULL,
                at timestamptz NOT NULL,
                PRIMARY KEY (user_id, local_date)
            )
            """,
            """
            CREATE TABLE streak_breaks (
                attempt_id uuid NOT NULL,
                local_date date NOT NULL,
                user_id uuid NOT NULL,
                length integer NOT NULL,
                at timestamptz NOT NULL,
                PRIMARY KEY (attempt_id, local_date)
            )
            """,
            "CREATE INDEX streak_breaks_by_date ON streak_breaks (local_date)",
            "CREATE INDEX streak_breaks_by_user ON streak_breaks (user_id)",
            // Intervals during which the user opted out of telemetry; `until` is null while it lasts.
            """
            CREATE TABLE telemetry_opt_outs (
                user_id uuid NOT NULL,
                since timestamptz NOT NULL,
                until timestamptz,
                PRIMARY KEY (user_id, since)
            )
            """,
            // Deleted users: events about them that arrive later (other topics) are ignored.
            "CREATE TABLE erased_users (user_id uuid PRIMARY KEY)",
        ]),
    ])
}
