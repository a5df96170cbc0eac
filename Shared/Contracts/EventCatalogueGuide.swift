import Foundation

/// The catalogue page's sections for readers outside Surge: how types are versioned, and how to consume the topics.
extension EventCatalogue {
    static let versioningSection = #"""
        ## Versioning

        An event type's name ends with its version (`surge.progress.checkin.recorded.v1`), and a version is a promise
        about the shape and meaning of its `data`:

        - **Within a version, a type only grows**, in ways a reader written today keeps working with: a new optional
          field (older records lack it, so every field added after a type's first release is optional; the field
          tables say which are required), a new value in a list of values such as `kind`, `outcome`, `reason` or
          `change` (the schemas list today's values; every list except weekdays may grow), and new event types on a
          topic.
        - **Anything a reader of the version could misread makes a new type**, `.v2`: a field removed, renamed, made
          required or given another type, unit or meaning; a different partition key or subject. A `.v1` is never
          changed that way.
        - **A `.v1` is produced beside its `.v2`**: the producing service writes both for each change, in the same
          transaction (each with its own `ce_id`, with the same key and subject), for at least 90 days after the first
          `.v2` and never for less than the topics' retention, so every consumer moves over on its own schedule. This
          page announces a `.v1`'s last day before it stops.
        - **Consumers must ignore what they do not know**: event types (a `.v2` they have not adopted yet, a type
          added later), fields, and values in a list (read an unknown value as "other", never as an error). They must
          not depend on the key order or spacing of the JSON value: the examples below are pretty-printed with sorted
          keys, the records on the topics carry PostgreSQL's `jsonb` rendering.

        """#

    static let consumingSection = #"""
        ## Consuming the topics from outside

        Dashboards, analysts and partners read the topics as any Kafka consumer does, with the broker address and the
        read-only credentials (ACLs on `surge.*.events`) that the operator gives them. The services' own default is
        `KAFKA_BOOTSTRAP_SERVERS=localhost:9092`; under Docker Compose the broker is `kafka:9092` inside the compose
        network. `make run` starts a development broker instead (librdkafka's in-memory mock cluster) on a free local
        port and writes its address to `.surge/local/run/kafka-bootstrap`; what it holds is lost when it stops.

        - **Group id**: your own, named after your application, such as `acme-dashboard`, and never one starting with
          `surge-`: those are the services' groups (`surge-<service>`), and joining one takes partitions, and so
          events, away from a service. The replicas of one application share one group and split the partitions.
        - **Offsets**: with `auto.offset.reset=earliest` a new group starts at the first offset each partition still
          retains, so it reads all the history the topic keeps. Commit an offset only after the event's effect is
          stored (`enable.auto.commit=false` and explicit commits, or `enable.auto.offset.store=false` and storing each
          offset once handled, as Surge's services do), so a crash replays events rather than losing them. To rebuild
          a projection, start a new group id, or reset the stopped group with `kafka-consumer-groups.sh
          --reset-offsets --to-earliest`.
        - **At least once**: the outbox relay publishes again a record the broker did not acknowledge, and a
          rebalance replays what was not committed, so one event may arrive twice. It keeps its `ce_id`: deduplicate
          by it, for instance by storing the ids handled in the same transaction as their effect.
        - **Order** holds per key only: the events with one record key (the `ce_partitionkey` each example shows: the
          user for most types; the group for group and chore events; the smaller id of the two for a
          friendship; a definition's group, owner or, for curated content, its own id; a board's challenge or
          group) arrive in the order they were written. There is no order across keys, partitions or topics: a user's
          `points.awarded` may be read before their `user.registered`.
        - **The CloudEvents Kafka protocol binding, binary content mode**: the attributes are the `ce_*` headers
          (UTF-8 text), the `data` is the record value (JSON, `content-type: application/json`) and the record key is
          the partition key. Dispatch on `ce_type`. The CloudEvents SDKs' Kafka bindings read these records as they
          are; structured mode is never used.
        - **Dead-letter topics are Surge's own**: `surge.deadletter.surge-<service>` holds what one of Surge's
          groups could not handle; it is no source of data for anyone else. Never write to any Surge topic. A record
          your consumer cannot handle is yours to park, in a topic or table of your own.
        - **Retention** is the broker's: the topics are created with no retention setting of their own, so Kafka's
          default (7 days, `log.retention.hours=168`) applies unless the operator sets more. A history longer than
          that needs your own store, fed as events arrive.

        With `kcat`, the progress events from the first retained offset, each as key, headers and value (Ctrl-C stops;
        the group remembers where it was):

        ```sh
        kcat -b localhost:9092 -G acme-dashboard -X auto.offset.reset=earliest -f '%k %h %s\n' \#(Topic.progress.name)
        ```

        (against `make run`'s broker: `-b "$(cat .surge/local/run/kafka-bootstrap)"`). The same in Python with
        `confluent_kafka`, committing after each record:

        ```python
        import json
        from confluent_kafka import Consumer

        consumer = Consumer({
            "bootstrap.servers": "localhost:9092",
            "group.id": "acme-dashboard",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        })
        consumer.subscribe(["\#(Topic.progress.name)", "\#(Topic.identity.name)"])
        try:
            while True:
                record = consumer.poll(1.0)
                if record is None:
                    continue
                if record.error():
                    raise RuntimeError(record.error())
                headers = {name: value.decode() for name, value in record.headers() or []}
                if headers.get("ce_type") == "surge.progress.checkin.recorded.v1":
                    data = json.loads(record.value())
                    # Store the effect together with headers["ce_id"]; skip an id already stored.
                    print(headers["ce_id"], record.key().decode(), data["localDate"], data["taskID"])
                # Any other type, known or not, is skipped.
                consumer.commit(message=record, asynchronous=False)
        finally:
            consumer.close()
        ```

        """#
}
