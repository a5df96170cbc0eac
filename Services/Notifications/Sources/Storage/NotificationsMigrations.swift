import SurgePostgres

/// The notification service's tables: who to tell and how (from identity's events), the next daily reminder per
/// user, the in-app inbox, and the vacations that silence the reminder.
enum NotificationsMigrations {
    static let set = MigrationSet(component: "notifications", migrations: [
        Migration(1, "recipients, reminders, inbox", [
            """
            CREATE TABLE recipients (
                user_id uuid PRIMARY KEY,
                display_name text NOT NULL,
                time_zone text NOT NULL,
                locale text,
                enabled boolean NOT NULL DEFAULT true,
                reminder_time text,
                quiet_start text,
                quiet_end text,
                last_check_in date
            )
            """,
            "CREATE TABLE erased_users (user_id uuid PRIMARY KEY)",
            // The next daily reminder per user; the scheduler reads only what is due, by this index.
            "CREATE TABLE reminders (user_id uuid PRIMARY KEY, fire_at timestamptz NOT NULL)",
            "CREATE INDEX reminders_due ON reminders (fire_at)",
            """
            CREATE TABLE inbox (
                notification_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                kind text NOT NULL,
                key text NOT NULL,
                title text NOT NULL,
                body text NOT NULL,
                deep_link text NOT NULL,
                created_at timestamptz NOT NULL,
                read_at timestamptz,
                archived_at timestamptz,
                UNIQUE (user_id, key)
            )
            """,
            "CREATE INDEX inbox_by_user ON inbox (user_id, created_at DESC, notification_id DESC)",
        ]),
        Migration(2, "vacations silence the daily reminder", [
            """
            CREATE TABLE vacations (
                pause_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                from_date date NOT NULL,
                through_date date
            )
            """,
            "CREATE INDEX vacations_by_user ON vacations (user_id)",
        ]),
    ])
}
