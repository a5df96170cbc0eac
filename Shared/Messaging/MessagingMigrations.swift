import SurgePostgres

/// The outbox and inbox tables every service keeps in its own schema, its consumers' parked records, and the answers to
/// keyed requests.
public enum MessagingMigrations {
    public static let set = MigrationSet(component: "messaging", migrations: [
        Migration(1, "outbox and processed events", [
            """
            CREATE TABLE outbox (
                position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event_id uuid NOT NULL UNIQUE,
                topic text NOT NULL,
                partition_key text NOT NULL,
                type text NOT NULL,
                source text NOT NULL,
                subject text NOT NULL,
                occurred_at timestamptz NOT NULL,
                traceparent text,
                tracestate text,
                request_id text,
                payload jsonb NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                published_at timestamptz
            )
            """,
            "CREATE INDEX outbox_unpublished ON outbox (position) WHERE published_at IS NULL",
            "CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL",
            """
            CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify(TG_TABLE_SCHEMA || '_outbox', '');
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER outbox_inserted AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()",
            """
            CREATE TABLE processed_events (
                consumer text NOT NULL,
                event_id uuid NOT NULL,
                event_type text NOT NULL,
                processed_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (consumer, event_id)
            )
            """,
            "CREATE INDEX processed_events_age ON processed_events (processed_at)",
        ]),
        Migration(2, "the outbox no longer notifies from inside the writing transaction (its commits serialised)", [
            "DROP TRIGGER outbox_inserted ON outbox",
            "DROP FUNCTION outbox_notify()",
        ]),
        Migration(3, "parked records: events waiting for what another partition or topic has not delivered yet", [
            """
            CREATE TABLE deferred_events (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                consumer text NOT NULL,
                event_id uuid NOT NULL,
                event_type text NOT NULL,
                topic text NOT NULL,
                kafka_partition integer NOT NULL,
                kafka_offset bigint NOT NULL,
                kafka_key bytea,
                value bytea,
                header_names text[] NOT NULL,
                header_values bytea[] NOT NULL,
                reason text NOT NULL,
                attempts integer NOT NULL DEFAULT 1,
                failures integer NOT NULL DEFAULT 0,
                first_deferred_at timestamptz NOT NULL DEFAULT now(),
                last_attempt_at timestamptz NOT NULL DEFAULT now(),
                next_attempt_at timestamptz NOT NULL,
                UNIQUE (consumer, event_id)
            )
            """,
            // The per-key rule (a record waits behind a parked one of its key) and the re-drive's oldest-first.
            "CREATE INDEX deferred_events_key ON deferred_events (consumer, topic, kafka_key, id)",
            "CREATE INDEX deferred_events_due ON deferred_events (consumer, next_attempt_at)",
        ]),
        // Marking a row published rewrote it whole (payload included) with a new entry in each of its indexes, and the
        // next read of the unpublished walked the entries those rewrites left: a third of the buffers a check-in's
        // services read. The positions still to publish now have a small table of their own; a row is written once.
        Migration(4, "the events still to publish listed apart, so that publishing one no longer rewrites its row", [
            // No foreign key: its check would be a trigger per event; the purge never deletes a row still listed here.
            "CREATE TABLE outbox_pending (position bigint PRIMARY KEY)",
            "INSERT INTO outbox_pending (position) SELECT position FROM outbox WHERE published_at IS NULL",
            "DROP INDEX outbox_unpublished",
            "DROP INDEX outbox_published",
            "ALTER TABLE outbox DROP COLUMN published_at",
            "CREATE INDEX outbox_created ON outbox (created_at)",
        ]),
        // Written in the keyed command's own transaction (Shared/Runtime's IdempotentRequestMiddleware).
        Migration(5, "the first answer to each keyed request the gateway forwarded, kept for a day", [
            """
            CREATE TABLE request_keys (
                scope text NOT NULL,
                key text NOT NULL,
                fingerprint bytea NOT NULL,
                status integer NOT NULL,
                content_type text,
                location text,
                body bytea NOT NULL,
                created_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (scope, key)
            )
            """,
            "CREATE INDEX request_keys_age ON request_keys (created_at)",
        ]),
        // An event's payload is written once and read back once, as text, by the relay: `jsonb` parsed and rebuilt it
        // on every insert (about four times the cost of `json`, which checks the syntax and keeps the text as given).
        Migration(6, "outbox payloads kept as the text that was encoded", [
            "ALTER TABLE outbox ALTER COLUMN payload TYPE json USING payload::json",
        ]),
    ])
}
