"""Migrations upgrade, downgrade and upgrade again, and leave exactly the schema the models describe."""

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Connection, MetaData, String, inspect

from bot.db.engine import alembic_config, create_engine, downgrade, head_revisions, migrate, migrate_if_due
from bot.db.models import Base

MODEL_TABLES = {
    "users", "dialog_sessions", "processed_updates", "fsm_records", "leads", "hf_models",
    "crm_deliveries", "offer_availability", "measurements",
}  # fmt: skip


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"{request.param}_url"))


def schema_differences(connection: Connection, metadata: MetaData = Base.metadata) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))


async def inspect_database(url: str, metadata: MetaData = Base.metadata) -> tuple[set[str], list[Any]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
            differences = await connection.run_sync(schema_differences, metadata)
    finally:
        await engine.dispose()
    return tables, differences


async def test_upgrade_downgrade_upgrade_again(db_url: str) -> None:
    await migrate(db_url)
    tables, differences = await inspect_database(db_url)
    assert tables == MODEL_TABLES | {"alembic_version"}
    assert differences == []

    await downgrade(db_url, "base")
    tables, _ = await inspect_database(db_url)
    assert tables == {"alembic_version"}

    await migrate(db_url)
    tables, differences = await inspect_database(db_url)
    assert tables == MODEL_TABLES | {"alembic_version"}
    assert differences == []


async def test_every_revision_downgrades_to_its_predecessor(db_url: str) -> None:
    """The 'stairway': each revision up, down and up again, so every downgrade() is exercised."""
    revisions = list(ScriptDirectory.from_config(alembic_config(db_url)).walk_revisions("base", "heads"))
    for revision in reversed(revisions):
        await migrate(db_url, revision.revision)
        await downgrade(db_url, "-1")
        await migrate(db_url, revision.revision)


async def test_migrate_creates_the_directory_of_a_new_sqlite_file(tmp_path: Any) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'data' / 'nested' / 'bot.sqlite3'}"
    await migrate(url)
    await migrate(url)  # at head already: a no-op, as on every start of the bot
    tables, differences = await inspect_database(url)
    assert tables == MODEL_TABLES | {"alembic_version"}
    assert differences == []


async def test_the_schema_comparison_notices_a_model_the_migrations_lack(sqlite_url: str) -> None:
    """Guards the comparison above: a column missing from the migrations must show up as a difference."""
    await migrate(sqlite_url)
    changed = MetaData()
    for table in Base.metadata.tables.values():
        table.to_metadata(changed)
    changed.tables["users"].append_column(Column("phone", String(32)))
    _, differences = await inspect_database(sqlite_url, changed)
    assert [difference[0] for difference in differences] == ["add_column"]


async def test_migrate_if_due_skips_alembic_at_head(sqlite_url: str) -> None:
    """The bot's start checks the SQLite revision without Alembic: the file-read head is Alembic's."""
    assert head_revisions() == frozenset(ScriptDirectory.from_config(alembic_config(sqlite_url)).get_heads())
    assert await migrate_if_due(sqlite_url)  # a new database: migrated
    assert not await migrate_if_due(sqlite_url)  # at head: nothing to do
    await downgrade(sqlite_url, "-1")
    assert await migrate_if_due(sqlite_url)  # one behind: upgraded again
    tables, differences = await inspect_database(sqlite_url)
    assert tables == MODEL_TABLES | {"alembic_version"}
    assert differences == []
