import SurgePostgres

/// The template's tables, in its own schema. Versions only grow; an applied migration is never edited.
enum TemplateMigrations {
    static let set = MigrationSet(component: "template", migrations: [
        Migration(1, "daily tallies", [
            """
            CREATE TABLE daily_tallies (
                user_id uuid NOT NULL,
                local_date date NOT NULL,
                check_ins integer NOT NULL,
                PRIMARY KEY (user_id, local_date)
            )
            """
        ]),
    ])
}
