'use strict';
// Where the server runs with `autovacuum = off` (as this repository's test server does), the
// long-running bench modes (--soak, --held-snapshot) stand in for it: without any vacuum no
// table reaches a plateau, and a "before" phase would not look like a real server's.
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');

/** How often the stand-in looks at the dead rows. */
const VACUUM_CHECK_MS = 20_000;

const clock = () => performance.timeOrigin + performance.now();

/** Whether the server at `url` runs autovacuum. */
async function autovacuumIsOn(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SHOW autovacuum')).rows[0].autovacuum === 'on';
  } finally {
    await client.end();
  }
}

// A table's own autovacuum setting where it has one (our migration sets them on jobs: 1000 and
// 0.05), else the server's.
const setting = (name) =>
  `coalesce((SELECT option_value::float8 FROM pg_options_to_table(c.reloptions)
              WHERE option_name = '${name}'), current_setting('${name}')::float8)`;

/**
 * Every VACUUM_CHECK_MS until stopped, `VACUUM (ANALYZE)` of each table of the database at `url`
 * whose dead rows pass autovacuum's trigger (threshold + scale factor x live rows), as autovacuum
 * would have; only the tables named in `relations` (regclass text) when given.
 */
function standInVacuum(url, { relations } = {}) {
  const client = new Client({ connectionString: url });
  let stopped = false;
  let timer;
  const vacuums = [];
  const check = async () => {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const { rows } = await client.query(
      `SELECT format('%I.%I', s.schemaname, s.relname) AS rel
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
        WHERE s.n_dead_tup > ${setting('autovacuum_vacuum_threshold')}
                             + ${setting('autovacuum_vacuum_scale_factor')} * s.n_live_tup
          AND ($1::regclass[] IS NULL OR s.relid = ANY ($1::regclass[]))`,
      [relations ?? null],
    );
    for (const { rel } of rows) {
      if (stopped) return;
      const at = clock();
      await client.query(`VACUUM (ANALYZE) ${rel}`);
      vacuums.push({ rel, at, ms: Math.round(clock() - at) });
    }
  };
  const loop = () => {
    timer = setTimeout(() => {
      check()
        // A check cut short by stop() (its connection ended) is no failure.
        .catch((error) => !stopped && console.error(`  stand-in vacuum failed: ${error.message}`))
        .finally(() => !stopped && loop());
    }, VACUUM_CHECK_MS);
  };
  const started = client.connect().then(loop);
  return {
    started,
    /** The VACUUMs run so far: table, start (performance time origin + now), duration in ms. */
    vacuums: () => vacuums,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await client.end().catch(() => undefined);
    },
  };
}

module.exports = { VACUUM_CHECK_MS, autovacuumIsOn, standInVacuum };
