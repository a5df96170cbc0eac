import SurgePostgres

enum IdentityMigrations {
    static let set = MigrationSet(component: "identity", migrations: [
        Migration(1, "users", [
            """
            CREATE TABLE users (
                id uuid PRIMARY KEY,
                display_name text NOT NULL,
                time_zone text NOT NULL,
                locale text,
                kind text NOT NULL,
                created_at timestamptz NOT NULL
            )
            """,
        ]),
    ])
}
