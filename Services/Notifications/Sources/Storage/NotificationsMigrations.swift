import SurgePostgres

/// The notification service's tables: who to tell and how (from identity's events), the next daily reminder per
/// user, the in-app inbox, the vacations that silence the reminder, push device tokens and the push deliveries still
/// due, webhooks, and the one-off notifications with what triggers them.
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
        Migration(5, "one-off notifications at a local time; misses per attempt; completion times", [
            "ALTER TABLE recipients ADD COLUMN personalised_time text",
            // A streak at risk, a re-engagement nudge, the weekly digest: due at `fire_at`, for the local day `on_date`
            // (useful until it ends); the key is the inbox's, so each is sent at most once.
            """
            CREATE TABLE scheduled_notifications (
                user_id uuid NOT NULL,
                key text NOT NULL,
                kind text NOT NULL,
                attempt_id uuid,
                on_date date NOT NULL,
                at_reminder_time boolean NOT NULL,
                fire_at timestamptz NOT NULL,
                PRIMARY KEY (user_id, key)
            )
            """,
            "CREATE INDEX scheduled_notifications_due ON scheduled_notifications (fire_at)",
            "CREATE TABLE attempt_misses (attempt_id uuid PRIMARY KEY, user_id uuid NOT NULL, consecutive integer NOT NULL)",
            "CREATE INDEX attempt_misses_by_user ON attempt_misses (user_id)",
            // The minute of each day's first completion, for the personalised reminder time.
            """
            CREATE TABLE completion_times (
                user_id uuid NOT NULL,
                local_date date NOT NULL,
                minute integer NOT NULL,
                PRIMARY KEY (user_id, local_date)
            )
            """,
        ]),
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
        Migration(7, "per-kind switches", [
            "ALTER TABLE recipients ADD COLUMN disabled_categories text[] NOT NULL DEFAULT '{}'"
        ]),
        // Per-habit reminders: each habit's reminder time (the latest version of its definition) and each user's active
        // habit attempts with the latest day each has a check-in.
        Migration(8, "per-habit reminders", [
            "CREATE TABLE habit_definitions (challenge_id uuid PRIMARY KEY, version integer NOT NULL, name text NOT NULL, reminder_time text)",
            """
            CREATE TABLE habit_attempts (
                attempt_id uuid PRIMARY KEY,
                user_id uuid NOT NULL,
                challenge_id uuid NOT NULL,
                last_check_in date
            )
            """,
            "CREATE INDEX habit_attempts_by_user ON habit_attempts (user_id)",
            "CREATE INDEX habit_attempts_by_challenge ON habit_attempts (challenge_id)",
        ]),
        // What the e-mail provider reports after a send: each report once (its webhook message id), matched to the mail
        // by the provider's message id when it names one of ours (the mail row keeps the latest bounce); the addresses
        // that hard-bounced or complained, to which nothing more is sent, kept until an operator deletes the row.
        Migration(9, "e-mail bounces and suppressed addresses", [
            "ALTER TABLE email_deliveries ADD COLUMN provider_message_id text",
            "ALTER TABLE email_deliveries ADD COLUMN bounce text",
            "ALTER TABLE email_deliveries ADD COLUMN bounced_at timestamptz",
            "CREATE INDEX email_deliveries_by_provider_id ON email_deliveries (provider_message_id) WHERE provider_message_id IS NOT NULL",
            """
            CREATE TABLE email_bounces (
                report_id text PRIMARY KEY,
                mail_id uuid,
                provider_message_id text,
                address text NOT NULL,
                kind text NOT NULL,
                detail text,
                reported_at timestamptz,
                received_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX email_bounces_age ON email_bounces (received_at)",
            """
            CREATE TABLE email_suppressions (
                address text PRIMARY KEY,
                kind text NOT NULL,
                report_id text NOT NULL,
                suppressed_at timestamptz NOT NULL
            )
            """,
        ]),
        // A device token belongs to one account: the one that registered it last (a phone signed into another
        // account). Duplicates from before keep their latest registration; the others go with their queued pushes.
        Migration(10, "one owner per device token", [
            """
            DELETE FROM push_tokens t USING push_tokens newer
            WHERE newer.platform = t.platform AND newer.token = t.token
              AND (newer.registered_at, newer.token_id) > (t.registered_at, t.token_id)
            """,
            "ALTER TABLE push_tokens DROP CONSTRAINT push_tokens_user_id_platform_token_key",
            "CREATE UNIQUE INDEX push_tokens_one_owner ON push_tokens (platform, token)",
        ]),
    ])
}
