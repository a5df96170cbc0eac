import SurgePostgres

/// The notification service's tables: who to tell and how (from identity's events), the next daily reminder per
/// user, the in-app inbox, the vacations that silence the reminder, push device tokens and the push deliveries still due.
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
        Migration(3, "push device tokens and the deliveries beyond the inbox", [
            """
            CREATE TABLE push_tokens (
                token_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                platform text NOT NULL,
                token text NOT NULL,
                registered_at timestamptz NOT NULL,
                UNIQUE (user_id, platform, token)
            )
            """,
            "CREATE INDEX push_tokens_by_user ON push_tokens (user_id, registered_at DESC)",
            // One row per notification and device still to be sent; gone once delivered or given up. Deleting the
            // notification (erasure) or the token (unregistered, removed) takes its pending deliveries with it.
            """
            CREATE TABLE push_deliveries (
                delivery_id uuid PRIMARY KEY,
                notification_id uuid NOT NULL REFERENCES inbox (notification_id) ON DELETE CASCADE,
                token_id uuid NOT NULL REFERENCES push_tokens (token_id) ON DELETE CASCADE,
                created_at timestamptz NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL,
                claim uuid,
                last_error text
            )
            """,
            "CREATE INDEX push_deliveries_due ON push_deliveries (next_attempt_at)",
            "CREATE INDEX push_deliveries_by_token ON push_deliveries (token_id)",
            "CREATE INDEX push_deliveries_by_notification ON push_deliveries (notification_id)",
        ]),
        // 4 and 5 are taken by work on other branches (webhooks, triggers); the migrator applies any missing version.
        // One row per account mail. The subject and bodies (the link and its token) are erased once the mail is sent or
        // given up; what came of it (status, provider error) is kept for 30 days.
        Migration(6, "account e-mail deliveries", [
            """
            CREATE TABLE email_deliveries (
                mail_id uuid PRIMARY KEY,
                kind text NOT NULL,
                address text NOT NULL,
                subject text,
                text_body text,
                html_body text,
                created_at timestamptz NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz NOT NULL,
                claim uuid,
                status text NOT NULL DEFAULT 'pending',
                last_error text,
                finished_at timestamptz
            )
            """,
            "CREATE INDEX email_deliveries_due ON email_deliveries (next_attempt_at) WHERE status = 'pending'",
            "CREATE INDEX email_deliveries_finished ON email_deliveries (finished_at) WHERE status <> 'pending'",
        ]),
    ])
}
