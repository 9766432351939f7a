import { Client } from 'pg';
import { createTestRole, sqlOn } from './roles';

/** Built-in types the library's operators and functions take. */
const TYPES = [
  'text',
  'varchar',
  'bigint',
  'integer',
  'smallint',
  'double precision',
  'numeric',
  'timestamptz',
  'interval',
  'jsonb',
  'boolean',
];
const COMPARISONS = ['=', '<>', '<', '<=', '>', '>='];
const ARITHMETIC = ['+', '-', '*', '/', '||'];
/** Functions the library calls with one argument, for which a look-alike of each type is made. */
const UNARY_FUNCTIONS = [
  'char_length',
  'length',
  'round',
  'to_jsonb',
  'md5',
  'pg_try_advisory_xact_lock',
  'pg_advisory_xact_lock',
];
/** ... with two arguments (every pair of types). */
const BINARY_FUNCTIONS = ['power', 'round', 'pg_notify', 'obj_description', 'current_setting'];
/** ... returning rows, with one array argument. */
const SET_FUNCTIONS = ['unnest'];
/** Aggregates, with one argument. */
const AGGREGATES = ['array_agg', 'bool_or', 'min', 'max', 'count'];

export interface HostileRole {
  /** The role's name (unique per test file run: roles are shared by every database). */
  name: string;
  /** How many times anything the role created ran, whoever called it. */
  hits(): Promise<number>;
  /** Drops what the role owns in the database, then the role. Call it before dropping the db. */
  drop(): Promise<void>;
}

/** `public.<name>`, quoted where the name is an operator or needs it. */
const fn = (name: string) => `public."${name}"`;

/**
 * What the role creates: a counter anyone may bump, and in `public` look-alikes of the operators
 * and functions the library uses, for every combination of the built-in types it uses (an exact
 * match for anything a statement might pass), each of which bumps the counter (`nextval` works
 * even in a function that lies about being IMMUTABLE, which lets it into index predicates, and
 * survives a rollback). Plus `public.jobs`, `public.claim_job_batch` and
 * `public.jobs_notify_inserted`, for anything that names them without a schema.
 */
function hostileDefinitions(): string[] {
  const statements: string[] = [
    `CREATE SEQUENCE public.attacker_hits`,
    `GRANT USAGE, SELECT, UPDATE ON SEQUENCE public.attacker_hits TO PUBLIC`,
    `CREATE FUNCTION public.attacker_hit() RETURNS bigint LANGUAGE sql VOLATILE
       AS $$ SELECT nextval('public.attacker_hits') $$`,
  ];
  let n = 0;
  const hostile = (args: string[], returns: string, setof = false): string => {
    const name = `attacker_fn_${++n}`;
    const params = args.map((type, i) => `a${i} ${type}`).join(', ');
    statements.push(
      `CREATE FUNCTION public.${name}(${params}) RETURNS ${setof ? 'SETOF ' : ''}${returns}
         LANGUAGE plpgsql IMMUTABLE
       AS $$ BEGIN PERFORM nextval('public.attacker_hits'); RETURN${setof ? '' : ' NULL'}; END $$`,
    );
    return `public.${name}`;
  };
  for (const left of TYPES) {
    for (const right of TYPES) {
      for (const op of COMPARISONS) {
        const procedure = hostile([left, right], 'boolean');
        statements.push(
          `CREATE OPERATOR public.${op} (LEFTARG = ${left}, RIGHTARG = ${right}, FUNCTION = ${procedure})`,
        );
      }
      for (const op of ARITHMETIC) {
        const procedure = hostile([left, right], op === '||' ? 'text' : left);
        statements.push(
          `CREATE OPERATOR public.${op} (LEFTARG = ${left}, RIGHTARG = ${right}, FUNCTION = ${procedure})`,
        );
      }
      for (const name of BINARY_FUNCTIONS) {
        const procedure = hostile([left, right], left);
        statements.push(`ALTER FUNCTION ${procedure}(${left}, ${right}) RENAME TO "${name}"`);
      }
    }
    for (const name of UNARY_FUNCTIONS) {
      const procedure = hostile([left], left);
      statements.push(`ALTER FUNCTION ${procedure}(${left}) RENAME TO "${name}"`);
    }
    for (const name of SET_FUNCTIONS) {
      const procedure = hostile([`${left}[]`], left, true);
      statements.push(`ALTER FUNCTION ${procedure}(${left}[]) RENAME TO "${name}"`);
    }
    for (const name of AGGREGATES) {
      const step = hostile([`${left}[]`, left], `${left}[]`);
      statements.push(`CREATE AGGREGATE ${fn(name)}(${left}) (SFUNC = ${step}, STYPE = ${left}[])`);
    }
    statements.push(
      `ALTER FUNCTION ${hostile([left, left, 'boolean'], 'text')}(${left}, ${left}, boolean)
         RENAME TO set_config`,
    );
  }
  for (const name of ['now', 'random', 'clock_timestamp']) {
    statements.push(`ALTER FUNCTION ${hostile([], 'timestamptz')}() RENAME TO "${name}"`);
  }
  statements.push(
    `CREATE AGGREGATE public.count(*) (SFUNC = ${hostile(['bigint'], 'bigint')}, STYPE = bigint)`,
    `ALTER FUNCTION ${hostile(['jsonb'], 'record', true)}(jsonb) RENAME TO jsonb_to_recordset`,
    // Anything that names the queue's objects without their schema.
    `CREATE VIEW public.jobs AS SELECT public.attacker_hit() AS id`,
    `ALTER FUNCTION ${hostile(
      [
        'text',
        'text[]',
        'integer',
        'timestamptz',
        'boolean',
        'integer[]',
        'integer[]',
        'integer[]',
        'integer[]',
        'float8[]',
      ],
      'bigint',
      true,
    )}(text, text[], integer, timestamptz, boolean, integer[], integer[], integer[], integer[],
       float8[]) RENAME TO claim_job_batch`,
    `ALTER FUNCTION ${hostile(['varchar', 'varchar[]', 'integer'], 'bigint', true)}(
       varchar, varchar[], integer) RENAME TO claim_job_batch`,
    `CREATE FUNCTION public.jobs_notify_inserted() RETURNS trigger LANGUAGE plpgsql
       AS $$ BEGIN PERFORM nextval('public.attacker_hits'); RETURN NULL; END $$`,
  );
  return statements;
}

/**
 * A role that may log in and create objects in the database's `public` schema (what PostgreSQL
 * before 15 gave every role, and one GRANT gives since), and nothing else; it has filled `public`
 * with look-alikes of everything the library calls (see `hostileDefinitions`). The caller drops
 * it in afterAll.
 */
export async function createHostileRole(databaseUrl: string): Promise<HostileRole> {
  const role = await createTestRole('jq_attacker', databaseUrl);
  const admin = sqlOn(databaseUrl);
  await admin(`GRANT CREATE ON SCHEMA public TO ${role.name}`);
  const attacker = new Client({ connectionString: role.url });
  await attacker.connect();
  try {
    // One simple-protocol query, one transaction: some 4,000 statements in about a second.
    await attacker.query(`BEGIN; ${hostileDefinitions().join(';\n')}; COMMIT`);
  } finally {
    await attacker.end();
  }
  return {
    name: role.name,
    async hits() {
      // Read as the table it is: no operator or function of the role's is involved.
      const [{ hits }] = await admin<{ hits: string }>(
        `SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS hits FROM public.attacker_hits`,
      );
      return Number(hits);
    },
    async drop() {
      // CASCADE: on a library that resolved to the role's operators, its indexes depend on them.
      await admin(`DROP OWNED BY ${role.name} CASCADE`);
      await role.drop();
    },
  };
}
