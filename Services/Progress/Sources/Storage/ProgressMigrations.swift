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
    ])
}
