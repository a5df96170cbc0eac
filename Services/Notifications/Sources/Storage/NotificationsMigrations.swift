import SurgePostgres

/// The notification service's tables: who to tell and how (from identity's events), the next daily reminder per
/// user, the in-app inbox, the vacations that silence the reminder, and webhooks.
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
        // 3 is the push channel's (another branch).
        Migration(4, "webhook subscriptions, deliveries and attempts; group members", [
            // Who belongs to which group, from identity's membership events: a group subscription hears its members.
            "CREATE TABLE group_members (group_id uuid NOT NULL, user_id uuid NOT NULL, PRIMARY KEY (group_id, user_id))",
            "CREATE INDEX group_members_by_user ON group_members (user_id)",
            // The secret is kept readable: each delivery is signed with it. During a rotation the previous one signs
            // too, until `previous_secret_until`.
            """
            CREATE TABLE webhook_subscriptions (
                webhook_id uuid PRIMARY KEY,
                owner_id uuid NOT NULL,
                group_id uuid,
                url text NOT NULL,
                secret text NOT NULL,
                previous_secret text,
                previous_secret_until timestamptz,
                disabled_at timestamptz,
                disabled_reason text,
                failing_since timestamptz,
                consecutive_failures integer NOT NULL DEFAULT 0,
                last_failure text,
                last_failure_at timestamptz,
                created_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX webhook_subscriptions_by_owner ON webhook_subscriptions (owner_id, created_at, webhook_id)",
            "CREATE INDEX webhook_subscriptions_by_group ON webhook_subscriptions (group_id) WHERE group_id IS NOT NULL",
            // One message per (subscription, notification); its body is fixed when it is enqueued, so every retry
            // signs the same bytes under the same `webhook-id`. The worker reads only what is due, by the index.
            """
            CREATE TABLE webhook_deliveries (
                delivery_id uuid PRIMARY KEY,
                webhook_id uuid NOT NULL REFERENCES webhook_subscriptions ON DELETE CASCADE,
                notification_id uuid NOT NULL,
                user_id uuid NOT NULL,
                kind text NOT NULL,
                key text NOT NULL,
                body text NOT NULL,
                attempts integer NOT NULL DEFAULT 0,
                next_attempt_at timestamptz,
                outcome text,
                created_at timestamptz NOT NULL,
                UNIQUE (webhook_id, notification_id)
            )
            """,
            "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL",
            "CREATE INDEX webhook_deliveries_by_user ON webhook_deliveries (user_id)",
            """
            CREATE TABLE webhook_attempts (
                delivery_id uuid NOT NULL REFERENCES webhook_deliveries ON DELETE CASCADE,
                attempt integer NOT NULL,
                webhook_id uuid NOT NULL,
                attempted_at timestamptz NOT NULL,
                status_code integer,
                outcome text NOT NULL,
                detail text,
                duration_ms integer NOT NULL,
                PRIMARY KEY (delivery_id, attempt)
            )
            """,
            "CREATE INDEX webhook_attempts_by_webhook ON webhook_attempts (webhook_id, attempted_at DESC)",
        ]),
    ])
}
