import { Client } from 'pg';

/** What regenerates the committed dump; the schema test prints it when the two differ. */
export const SCHEMA_DUMP_COMMAND = 'npm run schema:dump';

/** The committed dump, relative to the package root (libs/job-queue). */
export const SCHEMA_DUMP_FILE = 'schema.sql';

/**
 * The objects a migrated `schema` holds, read from the catalogs and written as SQL-like text
 * that a reader can take in at one sitting: the schema and its comment, each sequence, each table
 * (columns, constraints, storage options, indexes, triggers) and each function
 * (`pg_get_functiondef`), with their privileges, every list in name order.
 *
 * Not pg_dump: the embedded test server ships none, and pg_dump's text changes between server
 * versions; these catalog functions print the same on PostgreSQL 15 and 17. Names come out
 * schema-qualified (the session's search_path is pg_catalog alone), and the role that owns the
 * objects is written `<owner>`, so the dump does not depend on who ran the migrations.
 */
export async function readSchemaDump(client: Client, schema: string): Promise<string> {
  await client.query(`SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)`);
  const [namespace] = await rows<{ comment: string | null; acl: string }>(
    client,
    `SELECT pg_catalog.obj_description(n.oid, 'pg_namespace') AS comment,
            ${aclText('n.nspacl', 'n.nspowner')} AS acl
     FROM pg_catalog.pg_namespace n WHERE n.nspname = $1::text`,
    [schema],
  );
  if (!namespace) throw new Error(`No schema ${schema}: run the migrations first`);
  const parts = [
    `CREATE SCHEMA ${schema};\n` +
      (namespace.comment === null
        ? ''
        : `COMMENT ON SCHEMA ${schema} IS ${literal(namespace.comment)};\n`) +
      `-- privileges: ${namespace.acl}\n`,
    ...(await sequences(client, schema)),
    ...(await tables(client, schema)),
    ...(await functions(client, schema)),
  ];
  return `${header(schema)}\n${parts.join('\n')}`;
}

function header(schema: string): string {
  return (
    `-- The schema nest-pg-job-queue's migrations install (schema ${schema}), read from the\n` +
    `-- catalogs of a freshly migrated database. Generated: do not edit by hand. After changing\n` +
    `-- a migration, run \`${SCHEMA_DUMP_COMMAND}\` and commit the difference with it.\n`
  );
}

async function rows<T>(client: Client, sql: string, params: unknown[]): Promise<T[]> {
  return (await client.query(sql, params)).rows as T[];
}

/**
 * An ACL as `grantee: privileges` entries (`PUBLIC`, `<owner>` or the role's name), or `default`
 * when none was ever granted or revoked (`acl` NULL).
 */
function aclText(acl: string, owner: string): string {
  return `COALESCE((
    SELECT pg_catalog.string_agg(e.grantee || ': ' || e.privileges, '; '
                          ORDER BY e.grantee COLLATE "C")
    FROM (SELECT CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                      WHEN a.grantee = ${owner} THEN '<owner>'
                      ELSE pg_catalog.pg_get_userbyid(a.grantee) END AS grantee,
                 pg_catalog.string_agg(a.privilege_type
                                       || CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION'
                                               ELSE '' END,
                                       ', ' ORDER BY a.privilege_type COLLATE "C") AS privileges
          FROM pg_catalog.aclexplode(${acl}) a GROUP BY 1) e
  ), CASE WHEN ${acl} IS NULL THEN 'default' ELSE 'none' END)`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

async function sequences(client: Client, schema: string): Promise<string[]> {
  const found = await rows<{
    name: string;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cache: string;
    cycle: boolean;
    owned_by: string | null;
    acl: string;
  }>(
    client,
    `SELECT c.relname AS name, pg_catalog.format_type(s.seqtypid, NULL) AS type,
            s.seqstart AS start, s.seqincrement AS increment, s.seqmin AS min, s.seqmax AS max,
            s.seqcache AS cache, s.seqcycle AS cycle,
            (SELECT t.relname || '.' || a.attname
             FROM pg_catalog.pg_depend d
               JOIN pg_catalog.pg_class t ON t.oid = d.refobjid
               JOIN pg_catalog.pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
             WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid
               AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.deptype IN ('a', 'i')
            ) AS owned_by,
            ${aclText('c.relacl', 'c.relowner')} AS acl
     FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_sequence s ON s.seqrelid = c.oid
     WHERE n.nspname = $1::text AND c.relkind = 'S'
     ORDER BY c.relname`,
    [schema],
  );
  return found.map(
    (s) =>
      `CREATE SEQUENCE ${schema}.${s.name} AS ${s.type} START ${s.start} INCREMENT ${s.increment}` +
      ` MINVALUE ${s.min} MAXVALUE ${s.max} CACHE ${s.cache}${s.cycle ? ' CYCLE' : ''}` +
      `${s.owned_by ? ` OWNED BY ${schema}.${s.owned_by}` : ''};\n` +
      `-- privileges: ${s.acl}\n`,
  );
}

async function tables(client: Client, schema: string): Promise<string[]> {
  const found = await rows<{
    oid: number;
    name: string;
    options: string[] | null;
    comment: string | null;
    acl: string;
  }>(
    client,
    `SELECT c.oid, c.relname AS name, c.reloptions AS options,
            pg_catalog.obj_description(c.oid, 'pg_class') AS comment,
            ${aclText('c.relacl', 'c.relowner')} AS acl
     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1::text AND c.relkind IN ('r', 'p')
     ORDER BY c.relname`,
    [schema],
  );
  const out: string[] = [];
  for (const table of found) out.push(await tableText(client, schema, table));
  return out;
}

async function tableText(
  client: Client,
  schema: string,
  table: {
    oid: number;
    name: string;
    options: string[] | null;
    comment: string | null;
    acl: string;
  },
): Promise<string> {
  const qualified = `${schema}.${table.name}`;
  // Columns in their order, then constraints, indexes and triggers by name ("C": byte order, the
  // same whatever the database's collation).
  const parts = await rows<{ kind: 'column' | 'constraint' | 'index' | 'trigger'; text: string }>(
    client,
    `SELECT p.kind, p.text FROM (
       SELECT 1 AS rank, 'column' AS kind, pg_catalog.lpad(a.attnum::text, 5, '0') AS sort,
              pg_catalog.quote_ident(a.attname) || ' '
              || pg_catalog.format_type(a.atttypid, a.atttypmod)
              || CASE WHEN a.attcollation <> t.typcollation
                      THEN ' COLLATE ' || pg_catalog.quote_ident(co.collname) ELSE '' END
              || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
              || COALESCE(' DEFAULT ' || pg_catalog.pg_get_expr(d.adbin, d.adrelid), '')
              || COALESCE(' -- ' || pg_catalog.col_description(a.attrelid, a.attnum), '') AS text
       FROM pg_catalog.pg_attribute a
         JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
         LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
       UNION ALL
       SELECT 2, 'constraint', c.conname::text,
              'CONSTRAINT ' || pg_catalog.quote_ident(c.conname) || ' '
              || pg_catalog.pg_get_constraintdef(c.oid)
       FROM pg_catalog.pg_constraint c WHERE c.conrelid = $1::oid
       UNION ALL
       SELECT 3, 'index', ic.relname::text, pg_catalog.pg_get_indexdef(i.indexrelid) || ';'
       FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
       WHERE i.indrelid = $1::oid
       UNION ALL
       SELECT 4, 'trigger', tg.tgname::text, pg_catalog.pg_get_triggerdef(tg.oid) || ';'
       FROM pg_catalog.pg_trigger tg WHERE tg.tgrelid = $1::oid AND NOT tg.tgisinternal
     ) AS p
     ORDER BY p.rank, p.sort COLLATE "C"`,
    [table.oid],
  );
  const of = (...kinds: string[]) => parts.filter(({ kind }) => kinds.includes(kind));
  const body = of('column', 'constraint')
    .map(({ text }) => `    ${text}`)
    .join(',\n');
  return (
    `CREATE TABLE ${qualified} (\n${body}\n);\n` +
    (table.options ? `ALTER TABLE ${qualified} SET (${table.options.join(', ')});\n` : '') +
    (table.comment === null
      ? ''
      : `COMMENT ON TABLE ${qualified} IS ${literal(table.comment)};\n`) +
    `-- privileges: ${table.acl}\n` +
    of('index', 'trigger')
      .map(({ text }) => `${text}\n`)
      .join('')
  );
}

async function functions(client: Client, schema: string): Promise<string[]> {
  const found = await rows<{ definition: string; comment: string | null; acl: string }>(
    client,
    `SELECT pg_catalog.pg_get_functiondef(p.oid) AS definition,
            pg_catalog.obj_description(p.oid, 'pg_proc') AS comment,
            ${aclText('p.proacl', 'p.proowner')} AS acl
     FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = $1::text
     ORDER BY p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid) COLLATE "C"`,
    [schema],
  );
  return found.map(
    (f) =>
      `${f.definition.trimEnd()};\n` +
      (f.comment === null ? '' : `-- comment: ${f.comment}\n`) +
      `-- privileges: ${f.acl}\n`,
  );
}
