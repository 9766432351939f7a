/**
 * What the fuzz run adds to its own database, beside the queue's schema, so that invariants can
 * be checked on the whole history and not only on the moments the driver looks:
 * - `fuzz_transitions`: every insert of a job and every change of its status or run token, in
 *   commit-independent order (`seq`), with the row's key fields and the database's clock;
 * - `fuzz_deleted`: every deleted job, with its status and whether an unfinished job still
 *   depended on it at that moment (seen inside the deleting transaction);
 * - `fuzz_runs`: one row per handler start, written by the handler (test/fuzz/fuzz-worker.ts);
 * - `fuzz_limits`: every write of a type's limits to `job_types` (a worker's boot or `start()`
 *   stores its handlers'; an old node's start can store old ones again), on the database's clock.
 * The triggers are named `zz_…` so they fire after the queue's own triggers of the same kind, and
 * pin their own `search_path`: they also fire inside the queue's functions, which pin theirs.
 */
export const FUZZ_SCHEMA = `
  CREATE TABLE fuzz_transitions (
    seq             bigserial PRIMARY KEY,
    job_id          bigint NOT NULL,
    job_type        text NOT NULL,
    concurrency_key text,
    old_status      text,
    new_status      text NOT NULL,
    run_token       integer NOT NULL,
    attempts        integer NOT NULL,
    claimed_at      timestamptz,
    unfinished      integer NOT NULL,
    at              timestamptz NOT NULL DEFAULT clock_timestamp(),
    xid             bigint NOT NULL DEFAULT txid_current()
  );
  CREATE INDEX fuzz_transitions_job_idx ON fuzz_transitions (job_id, seq);

  CREATE FUNCTION fuzz_record_transition() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_catalog AS $$
  BEGIN
    INSERT INTO fuzz_transitions (job_id, job_type, concurrency_key, old_status, new_status,
                                  run_token, attempts, claimed_at, unfinished)
    VALUES (NEW.id, NEW.job_type, NEW.concurrency_key,
            CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END, NEW.status,
            NEW.run_token, NEW.attempts, NEW.claimed_at, NEW.unfinished_dependencies);
    RETURN NULL;
  END $$;
  CREATE TRIGGER zz_fuzz_inserted AFTER INSERT ON job_queue.jobs
    FOR EACH ROW EXECUTE FUNCTION fuzz_record_transition();
  CREATE TRIGGER zz_fuzz_changed AFTER UPDATE ON job_queue.jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.run_token IS DISTINCT FROM NEW.run_token)
    EXECUTE FUNCTION fuzz_record_transition();

  CREATE TABLE fuzz_deleted (
    seq                 bigserial PRIMARY KEY,
    job_id              bigint NOT NULL,
    job_type            text NOT NULL,
    status              text NOT NULL,
    unfinished_dependants bigint[] NOT NULL,
    at                  timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE FUNCTION fuzz_record_deletion() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_catalog AS $$
  BEGIN
    INSERT INTO fuzz_deleted (job_id, job_type, status, unfinished_dependants)
    SELECT OLD.id, OLD.job_type, OLD.status, coalesce(array_agg(w.id ORDER BY w.id), '{}')
    FROM job_queue.job_dependencies e JOIN job_queue.jobs w ON w.id = e.job_id
    WHERE e.dependency_id = OLD.id
      AND w.status NOT IN ('completed', 'failed', 'cancelled');
    RETURN NULL;
  END $$;
  CREATE TRIGGER zz_fuzz_deleted AFTER DELETE ON job_queue.jobs
    FOR EACH ROW EXECUTE FUNCTION fuzz_record_deletion();

  CREATE TABLE fuzz_runs (
    id         bigserial PRIMARY KEY,
    job_id     bigint NOT NULL,
    job_type   text NOT NULL,
    run_token  integer NOT NULL,
    attempt    integer NOT NULL,
    worker_id  text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE INDEX fuzz_runs_job_idx ON fuzz_runs (job_id);

  CREATE TABLE fuzz_limits (
    seq         bigserial PRIMARY KEY,
    job_type    text NOT NULL,
    per_key     integer,
    global_limit integer,
    rate_max    integer,
    rate_per_ms integer,
    rate_by_key boolean NOT NULL,
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE FUNCTION fuzz_record_limits() RETURNS trigger LANGUAGE plpgsql SET search_path = public, pg_catalog AS $$
  BEGIN
    INSERT INTO fuzz_limits (job_type, per_key, global_limit, rate_max, rate_per_ms, rate_by_key)
    VALUES (NEW.job_type, NEW.concurrency_per_key, NEW.global_concurrency, NEW.rate_max,
            NEW.rate_per_ms, NEW.rate_by_key);
    RETURN NULL;
  END $$;
  CREATE TRIGGER zz_fuzz_limits AFTER INSERT OR UPDATE ON job_queue.job_types
    FOR EACH ROW EXECUTE FUNCTION fuzz_record_limits();
`;
