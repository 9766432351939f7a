-- The schema nest-pg-job-queue's migrations install (schema job_queue), read from the
-- catalogs of a freshly migrated database. Generated: do not edit by hand. After changing
-- a migration, run `npm run schema:dump` and commit the difference with it.

CREATE SCHEMA job_queue;
COMMENT ON SCHEMA job_queue IS 'nest-pg-job-queue: created by its CreateJobsTable migration';
-- privileges: default

CREATE SEQUENCE job_queue.job_events_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 OWNED BY job_queue.job_events.id;
-- privileges: default

CREATE SEQUENCE job_queue.jobs_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1 OWNED BY job_queue.jobs.id;
-- privileges: default

CREATE TABLE job_queue.job_dependencies (
    dependency_id bigint NOT NULL,
    job_id bigint NOT NULL,
    CONSTRAINT job_dependencies_pkey PRIMARY KEY (dependency_id, job_id)
);
-- privileges: default
CREATE INDEX job_dependencies_job_idx ON job_queue.job_dependencies USING btree (job_id, dependency_id);
CREATE UNIQUE INDEX job_dependencies_pkey ON job_queue.job_dependencies USING btree (dependency_id, job_id);

CREATE TABLE job_queue.job_events (
    job_id bigint NOT NULL,
    id bigint NOT NULL,
    run_token integer NOT NULL,
    attempt integer NOT NULL,
    at timestamp with time zone NOT NULL,
    kind text NOT NULL,
    message text,
    data jsonb,
    CONSTRAINT job_events_job_id_fkey FOREIGN KEY (job_id) REFERENCES job_queue.jobs(id) ON DELETE CASCADE,
    CONSTRAINT job_events_kind_check CHECK ((kind = ANY (ARRAY['claimed'::text, 'progress'::text, 'log'::text, 'retrying'::text, 'completed'::text, 'failed'::text, 'cancelled'::text, 'rescued'::text, 'snoozed'::text, 'dropped'::text]))),
    CONSTRAINT job_events_message_length_check CHECK ((char_length(message) <= 2000)),
    CONSTRAINT job_events_pkey PRIMARY KEY (job_id, id)
);
-- privileges: default
CREATE UNIQUE INDEX job_events_pkey ON job_queue.job_events USING btree (job_id, id);

CREATE TABLE job_queue.job_rate_blocked (
    job_type text NOT NULL,
    rate_key text NOT NULL,
    opens_at timestamp with time zone NOT NULL,
    CONSTRAINT job_rate_blocked_pkey PRIMARY KEY (job_type, rate_key)
);
-- privileges: default
CREATE INDEX job_rate_blocked_opens_idx ON job_queue.job_rate_blocked USING btree (job_type, opens_at);
CREATE UNIQUE INDEX job_rate_blocked_pkey ON job_queue.job_rate_blocked USING btree (job_type, rate_key);

CREATE TABLE job_queue.job_rate_starts (
    job_type text NOT NULL,
    rate_key text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    starts integer NOT NULL,
    CONSTRAINT job_rate_starts_starts_check CHECK ((starts > 0))
);
-- privileges: default
CREATE INDEX job_rate_starts_window_idx ON job_queue.job_rate_starts USING btree (job_type, rate_key, started_at);

CREATE TABLE job_queue.job_schedule_ticks (
    id boolean NOT NULL DEFAULT true,
    ticking_since timestamp with time zone NOT NULL,
    ticked_at timestamp with time zone NOT NULL,
    CONSTRAINT job_schedule_ticks_one_row_check CHECK (id),
    CONSTRAINT job_schedule_ticks_pkey PRIMARY KEY (id)
);
-- privileges: default
CREATE UNIQUE INDEX job_schedule_ticks_pkey ON job_queue.job_schedule_ticks USING btree (id);

CREATE TABLE job_queue.job_schedules (
    name text NOT NULL,
    cron text NOT NULL,
    timezone text NOT NULL DEFAULT 'UTC'::text,
    catch_up text NOT NULL DEFAULT 'once'::text,
    job_type text NOT NULL,
    data jsonb NOT NULL DEFAULT 'null'::jsonb,
    priority integer NOT NULL DEFAULT 100,
    max_attempts integer,
    source text NOT NULL DEFAULT 'schedule'::text,
    next_fire_at timestamp with time zone,
    last_fire_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL DEFAULT now(),
    updated_at timestamp with time zone NOT NULL DEFAULT now(),
    CONSTRAINT job_schedules_catch_up_check CHECK ((catch_up = ANY (ARRAY['once'::text, 'skip'::text]))),
    CONSTRAINT job_schedules_cron_length_check CHECK ((char_length(cron) <= 255)),
    CONSTRAINT job_schedules_job_type_length_check CHECK ((char_length(job_type) <= 255)),
    CONSTRAINT job_schedules_max_attempts_check CHECK ((max_attempts >= 1)),
    CONSTRAINT job_schedules_name_length_check CHECK ((char_length(name) <= 255)),
    CONSTRAINT job_schedules_pkey PRIMARY KEY (name),
    CONSTRAINT job_schedules_source_check CHECK ((source = ANY (ARRAY['handler'::text, 'schedule'::text])))
);
-- privileges: default
CREATE INDEX job_schedules_next_fire_at_idx ON job_queue.job_schedules USING btree (next_fire_at) WHERE (next_fire_at IS NOT NULL);
CREATE UNIQUE INDEX job_schedules_pkey ON job_queue.job_schedules USING btree (name);

CREATE TABLE job_queue.job_stats (
    id boolean NOT NULL DEFAULT true,
    counts jsonb NOT NULL,
    refreshed_at timestamp with time zone NOT NULL,
    count_ms double precision NOT NULL,
    CONSTRAINT job_stats_count_ms_check CHECK ((count_ms >= (0)::double precision)),
    CONSTRAINT job_stats_one_row_check CHECK (id),
    CONSTRAINT job_stats_pkey PRIMARY KEY (id)
);
-- privileges: default
CREATE UNIQUE INDEX job_stats_pkey ON job_queue.job_stats USING btree (id);

CREATE TABLE job_queue.job_types (
    job_type text NOT NULL,
    paused_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL DEFAULT now(),
    updated_at timestamp with time zone NOT NULL DEFAULT now(),
    completed_retention_ms bigint,
    failed_retention_ms bigint,
    cancelled_retention_ms bigint,
    retention_updated_at timestamp with time zone,
    concurrency_per_key integer,
    global_concurrency integer,
    ordered_keys boolean NOT NULL DEFAULT false,
    limits_updated_at timestamp with time zone,
    rate_max integer,
    rate_per_ms integer,
    rate_by_key boolean NOT NULL DEFAULT false,
    dead_letter_type text,
    CONSTRAINT job_types_dead_letter_type_check CHECK ((dead_letter_type <> job_type)),
    CONSTRAINT job_types_dead_letter_type_length_check CHECK ((char_length(dead_letter_type) <= 255)),
    CONSTRAINT job_types_job_type_length_check CHECK ((char_length(job_type) <= 255)),
    CONSTRAINT job_types_limits_check CHECK (((concurrency_per_key > 0) AND (global_concurrency > 0) AND ((NOT ordered_keys) OR (NOT (concurrency_per_key IS DISTINCT FROM 1))))),
    CONSTRAINT job_types_pkey PRIMARY KEY (job_type),
    CONSTRAINT job_types_rate_limit_check CHECK ((((rate_max IS NULL) = (rate_per_ms IS NULL)) AND (rate_max > 0) AND (rate_per_ms > 0) AND ((NOT rate_by_key) OR (rate_max IS NOT NULL)))),
    CONSTRAINT job_types_retention_check CHECK (((completed_retention_ms >= 0) AND (failed_retention_ms >= 0) AND (cancelled_retention_ms >= 0)))
);
-- privileges: default
CREATE UNIQUE INDEX job_types_pkey ON job_queue.job_types USING btree (job_type);

CREATE TABLE job_queue.jobs (
    id bigint NOT NULL DEFAULT nextval('job_queue.jobs_id_seq'::regclass),
    job_type text NOT NULL,
    priority integer NOT NULL DEFAULT 100,
    status text NOT NULL DEFAULT 'pending'::text,
    data jsonb NOT NULL DEFAULT '{}'::jsonb,
    progress smallint NOT NULL DEFAULT 0,
    current_stage text,
    events_count integer NOT NULL DEFAULT 0,
    worker_id text,
    claimed_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL DEFAULT now(),
    started_at timestamp with time zone,
    completed_at timestamp with time zone,
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer,
    run_token integer NOT NULL DEFAULT 0,
    backoff_base_ms integer,
    backoff_max_ms integer,
    backoff_jitter double precision,
    last_error text,
    run_at timestamp with time zone NOT NULL DEFAULT now(),
    heartbeat_at timestamp with time zone,
    unique_key text,
    result jsonb,
    updated_at timestamp with time zone NOT NULL DEFAULT now(),
    concurrency_key text,
    unique_states smallint,
    meta jsonb,
    flow_id uuid,
    step_name text,
    unfinished_dependencies integer NOT NULL DEFAULT 0,
    on_dependency_failure text,
    has_dependants boolean NOT NULL DEFAULT false,
    CONSTRAINT jobs_attempts_check CHECK (((attempts >= 0) AND ((max_attempts IS NULL) OR (max_attempts >= 1)))),
    CONSTRAINT jobs_concurrency_key_length_check CHECK ((char_length(concurrency_key) <= 255)),
    CONSTRAINT jobs_current_stage_length_check CHECK ((char_length(current_stage) <= 255)),
    CONSTRAINT jobs_dependencies_check CHECK (((unfinished_dependencies >= 0) AND (on_dependency_failure = ANY (ARRAY['fail'::text, 'continue'::text])))),
    CONSTRAINT jobs_job_type_length_check CHECK ((char_length(job_type) <= 255)),
    CONSTRAINT jobs_pkey PRIMARY KEY (id),
    CONSTRAINT jobs_progress_check CHECK (((progress >= 0) AND (progress <= 100))),
    CONSTRAINT jobs_status_check CHECK ((status = ANY (ARRAY['scheduled'::text, 'pending'::text, 'claimed'::text, 'running'::text, 'completed'::text, 'failed'::text, 'cancelled'::text, 'waiting'::text, 'blocked'::text]))),
    CONSTRAINT jobs_step_name_length_check CHECK ((char_length(step_name) <= 255)),
    CONSTRAINT jobs_unique_key_length_check CHECK ((char_length(unique_key) <= 297)),
    CONSTRAINT jobs_worker_id_length_check CHECK ((char_length(worker_id) <= 255))
);
ALTER TABLE job_queue.jobs SET (autovacuum_vacuum_scale_factor=0.05, autovacuum_vacuum_threshold=1000, autovacuum_analyze_scale_factor=0.05, autovacuum_analyze_threshold=1000);
-- privileges: default
CREATE INDEX jobs_claim_idx ON job_queue.jobs USING btree (job_type, priority DESC, created_at, id) WHERE (status = 'pending'::text);
CREATE INDEX jobs_finished_idx ON job_queue.jobs USING btree (job_type, status, completed_at) WHERE (status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text]));
CREATE INDEX jobs_flow_idx ON job_queue.jobs USING btree (flow_id) WHERE (flow_id IS NOT NULL);
CREATE INDEX jobs_key_slots_idx ON job_queue.jobs USING btree (job_type, concurrency_key, status, id) WHERE ((concurrency_key IS NOT NULL) AND (status = ANY (ARRAY['pending'::text, 'claimed'::text, 'running'::text, 'scheduled'::text])));
CREATE INDEX jobs_key_waiting_idx ON job_queue.jobs USING btree (job_type, concurrency_key, priority DESC, created_at, id) WHERE (status = 'waiting'::text);
CREATE INDEX jobs_lease_idx ON job_queue.jobs USING btree (heartbeat_at) WHERE (status = ANY (ARRAY['claimed'::text, 'running'::text]));
CREATE INDEX jobs_list_idx ON job_queue.jobs USING btree (job_type, status, id) WHERE (status <> ALL (ARRAY['claimed'::text, 'running'::text]));
CREATE UNIQUE INDEX jobs_pkey ON job_queue.jobs USING btree (id);
CREATE INDEX jobs_scheduled_idx ON job_queue.jobs USING btree (run_at) WHERE (status = 'scheduled'::text);
CREATE UNIQUE INDEX jobs_successor_key_idx ON job_queue.jobs USING btree (unique_key) WHERE ((status = 'blocked'::text) AND (unique_key IS NOT NULL));
CREATE UNIQUE INDEX jobs_unique_key_idx ON job_queue.jobs USING btree (unique_key) WHERE ((unique_key IS NOT NULL) AND ((status = ANY (ARRAY['scheduled'::text, 'pending'::text, 'claimed'::text, 'running'::text, 'waiting'::text])) OR job_queue.job_unique_state_counts(unique_states, status)));
CREATE INDEX jobs_unique_key_prefix_idx ON job_queue.jobs USING btree (unique_key COLLATE "C") WHERE ((unique_key IS NOT NULL) AND (status = ANY (ARRAY['scheduled'::text, 'pending'::text, 'claimed'::text, 'running'::text, 'waiting'::text])));
CREATE TRIGGER jobs_dead_lettered AFTER UPDATE OF status ON job_queue.jobs FOR EACH ROW WHEN (((new.status = 'failed'::text) AND (old.status <> 'failed'::text) AND (new.attempts > 0))) EXECUTE FUNCTION job_queue.jobs_dead_letter();
CREATE TRIGGER jobs_dependencies_kept BEFORE DELETE ON job_queue.jobs FOR EACH ROW WHEN ((old.has_dependants OR (old.on_dependency_failure IS NOT NULL))) EXECUTE FUNCTION job_queue.jobs_keep_dependencies();
CREATE TRIGGER jobs_dependency_finished AFTER UPDATE OF status ON job_queue.jobs FOR EACH ROW WHEN ((new.has_dependants AND (new.status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])) AND (old.status <> ALL (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])))) EXECUTE FUNCTION job_queue.jobs_resolve_dependants();
CREATE TRIGGER jobs_dependency_reopened AFTER UPDATE OF status ON job_queue.jobs FOR EACH ROW WHEN ((new.has_dependants AND (old.status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])) AND (new.status <> ALL (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])))) EXECUTE FUNCTION job_queue.jobs_reopen_dependants();
CREATE TRIGGER jobs_key_slot_released AFTER UPDATE OF status ON job_queue.jobs FOR EACH ROW WHEN (((new.concurrency_key IS NOT NULL) AND (((old.status = ANY (ARRAY['claimed'::text, 'running'::text])) AND (new.status <> ALL (ARRAY['claimed'::text, 'running'::text]))) OR ((old.status = 'scheduled'::text) AND ((old.attempts > 0) OR (old.started_at IS NOT NULL)) AND (new.status = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])))))) EXECUTE FUNCTION job_queue.jobs_release_key_slot();
CREATE TRIGGER jobs_notify_inserted AFTER INSERT ON job_queue.jobs FOR EACH STATEMENT EXECUTE FUNCTION job_queue.jobs_notify_inserted();

CREATE OR REPLACE FUNCTION job_queue.claim_job_batch(p_worker_id text, p_job_types text[], p_batch_size integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone, p_start boolean DEFAULT false, p_type_caps integer[] DEFAULT NULL::integer[], p_max_attempts integer[] DEFAULT NULL::integer[], p_backoff_base_ms integer[] DEFAULT NULL::integer[], p_backoff_max_ms integer[] DEFAULT NULL::integer[], p_backoff_jitter double precision[] DEFAULT NULL::double precision[], p_after_job_types text[] DEFAULT NULL::text[], p_after_priorities integer[] DEFAULT NULL::integer[], p_after_created_at timestamp with time zone[] DEFAULT NULL::timestamp with time zone[], p_after_ids bigint[] DEFAULT NULL::bigint[])
 RETURNS SETOF job_queue.jobs
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
 SET jit TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
    DECLARE
      limited_types bigint;
      released_jobs bigint;
    BEGIN
      PERFORM pg_catalog.pg_advisory_xact_lock(-1675065576, pg_catalog.hashtext(t.job_type))
      FROM (SELECT lt.job_type FROM "job_queue".job_types lt
            WHERE lt.job_type = ANY (p_job_types)
              AND (lt.concurrency_per_key IS NOT NULL OR lt.global_concurrency IS NOT NULL
                   OR lt.rate_max IS NOT NULL)
            ORDER BY lt.job_type) AS t;
      GET DIAGNOSTICS limited_types = ROW_COUNT;
      IF limited_types > 0 THEN
      DELETE FROM "job_queue".job_rate_starts s USING "job_queue".job_types lt
      WHERE lt.job_type = ANY (p_job_types) AND lt.rate_max IS NOT NULL
        AND s.job_type = lt.job_type AND s.started_at <= COALESCE($4, clock_timestamp()) - ((lt.rate_per_ms + 50) * interval '1 millisecond');
      WITH opened AS (
        SELECT b.job_type, b.rate_key, lt.rate_max
        FROM "job_queue".job_rate_blocked b LEFT JOIN "job_queue".job_types lt ON lt.job_type = b.job_type
        WHERE b.job_type = ANY (p_job_types) AND b.opens_at <= COALESCE($4, clock_timestamp())
      ), moved AS (
        UPDATE "job_queue".jobs AS jobs SET status = 'pending', updated_at = COALESCE($4, now())
        FROM (SELECT w.id FROM opened CROSS JOIN LATERAL (
                SELECT j.id FROM "job_queue".jobs j
                WHERE j.status = 'waiting' AND j.job_type = opened.job_type
                  AND j.concurrency_key = opened.rate_key
                ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
                LIMIT opened.rate_max
                FOR UPDATE SKIP LOCKED) AS w) AS picked
        WHERE jobs.id = picked.id
        RETURNING jobs.id
      ), emptied AS (
        DELETE FROM "job_queue".job_rate_blocked b USING opened
        WHERE b.job_type = opened.job_type AND b.rate_key = opened.rate_key
          AND NOT EXISTS (SELECT 1 FROM "job_queue".jobs j
                          WHERE j.status = 'waiting' AND j.job_type = opened.job_type
                            AND j.concurrency_key = opened.rate_key
                          OFFSET opened.rate_max)
        RETURNING 1
      )
      SELECT count(*) INTO released_jobs FROM moved;
        RETURN QUERY 
  WITH types AS (
    SELECT t.job_type,
           min(LEAST(COALESCE(t.cap, $3), $3)) AS cap,
           min(t.max_attempts) AS max_attempts,
           min(t.backoff_base_ms) AS backoff_base_ms,
           min(t.backoff_max_ms) AS backoff_max_ms,
           min(t.backoff_jitter) AS backoff_jitter
    FROM unnest($2::text[], $6::integer[], $7::integer[], $8::integer[], $9::integer[],
                $10::float8[])
      AS t(job_type, cap, max_attempts, backoff_base_ms, backoff_max_ms, backoff_jitter)
    WHERE t.job_type IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM "job_queue".job_types paused
                      WHERE paused.job_type = t.job_type AND paused.paused_at IS NOT NULL)
    GROUP BY t.job_type
    HAVING min(LEAST(COALESCE(t.cap, $3), $3)) > 0
  ), cursors AS (
    SELECT DISTINCT ON (c.job_type, c.priority) c.job_type, c.priority::bigint AS priority,
           c.created_at, c.id
    FROM unnest($11::text[], $12::integer[], $13::timestamptz[], $14::bigint[])
      AS c(job_type, priority, created_at, id)
    WHERE c.job_type IN (SELECT types.job_type FROM types)
      AND c.priority IS NOT NULL AND c.created_at IS NOT NULL AND c.id IS NOT NULL
    ORDER BY c.job_type, c.priority, c.created_at ASC, c.id ASC
  ), segments AS (
    SELECT cursors.job_type, cursors.priority AS lo, cursors.priority AS hi,
           cursors.created_at AS after_created_at, cursors.id AS after_id
    FROM cursors
    UNION ALL
    SELECT above.job_type, above.priority + 1, above.hi, '-infinity'::timestamptz, 0::bigint
    FROM (
      SELECT cursors.job_type, cursors.priority,
             COALESCE(lag(cursors.priority) OVER (PARTITION BY cursors.job_type
                                                  ORDER BY cursors.priority DESC) - 1,
                      2147483647::bigint) AS hi
      FROM cursors
    ) AS above
    WHERE above.priority + 1 <= above.hi
    UNION ALL
    SELECT types.job_type, (-2147483648)::bigint,
           COALESCE(min(cursors.priority) - 1, 2147483647::bigint),
           '-infinity'::timestamptz, 0::bigint
    FROM types LEFT JOIN cursors ON cursors.job_type = types.job_type
    GROUP BY types.job_type
    HAVING COALESCE(min(cursors.priority) - 1, 2147483647::bigint) >= (-2147483648)::bigint
  ), typed AS (
    SELECT types.job_type, lt.concurrency_per_key AS per_key,
           COALESCE(lt.ordered_keys, false) AS ordered,
           lt.rate_max, COALESCE(lt.rate_by_key, false) AS rate_by_key,
           COALESCE($4, clock_timestamp()) - ((COALESCE(lt.rate_per_ms, 0) + 50) * interval '1 millisecond') AS window_start,
           (lt.concurrency_per_key IS NOT NULL OR COALESCE(lt.rate_by_key, false)) AS keyed,
           CASE WHEN lt.global_concurrency IS NULL THEN types.cap
                ELSE LEAST(types.cap, GREATEST(0, lt.global_concurrency - (
                  SELECT count(*) FROM "job_queue".jobs h
                  WHERE h.status IN ('claimed', 'running') AND h.job_type = types.job_type)))
           END AS free
    FROM types LEFT JOIN "job_queue".job_types lt ON lt.job_type = types.job_type
  ), limits AS (
    SELECT typed.*,
           CASE WHEN typed.rate_max IS NULL OR typed.rate_by_key THEN typed.free
                ELSE LEAST(typed.free, GREATEST(0, typed.rate_max - (
                  SELECT COALESCE(sum(s.starts), 0) FROM "job_queue".job_rate_starts s
                  WHERE s.job_type = typed.job_type AND s.rate_key = ''
                    AND s.started_at > typed.window_start)))
           END AS room
    FROM typed
  ), window_rows AS (
    SELECT limits.job_type, limits.per_key, limits.ordered, limits.rate_max, limits.rate_by_key,
           limits.window_start, w.id, w.priority, w.created_at, w.concurrency_key,
           row_number() OVER (PARTITION BY limits.job_type, w.concurrency_key
                              ORDER BY w.priority DESC, w.created_at ASC, w.id ASC) AS key_rank
    FROM limits CROSS JOIN LATERAL (
      SELECT j.id, j.priority, j.created_at, j.concurrency_key FROM "job_queue".jobs j
      WHERE j.status = 'pending' AND j.job_type = limits.job_type
        AND j.run_at <= COALESCE($4, clock_timestamp())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT limits.room + LEAST(limits.room, 16)
    ) AS w
    WHERE limits.keyed AND limits.room > 0
  ), window_slots AS (
    SELECT window_rows.*,
           CASE WHEN window_rows.concurrency_key IS NULL OR window_rows.per_key IS NULL THEN 0
                ELSE (SELECT count(*) FROM (
      SELECT o.id FROM "job_queue".jobs o
      WHERE o.job_type = window_rows.job_type AND o.concurrency_key = window_rows.concurrency_key
        AND o.status IN ('claimed', 'running', 'scheduled') AND (o.status IN ('claimed', 'running') OR (window_rows.ordered AND o.status = 'scheduled'
     AND (o.attempts > 0 OR o.started_at IS NOT NULL)))
                      ) AS holders) END AS held,
           CASE WHEN window_rows.concurrency_key IS NULL OR NOT window_rows.rate_by_key THEN 0
                ELSE (
                  SELECT COALESCE(sum(s.starts), 0) FROM "job_queue".job_rate_starts s
                  WHERE s.job_type = window_rows.job_type AND s.rate_key = window_rows.concurrency_key
                    AND s.started_at > window_rows.window_start)
           END AS key_starts
    FROM window_rows
  ), eligible AS (
    SELECT window_slots.job_type, window_slots.id, window_slots.priority,
           window_slots.created_at,
           row_number() OVER (PARTITION BY window_slots.job_type
                              ORDER BY window_slots.priority DESC, window_slots.created_at ASC,
                                       window_slots.id ASC) AS n
    FROM window_slots
    WHERE window_slots.concurrency_key IS NULL
       OR ((window_slots.per_key IS NULL
            OR window_slots.held + window_slots.key_rank <= window_slots.per_key)
           AND (NOT window_slots.rate_by_key
                OR window_slots.key_starts + window_slots.key_rank <= window_slots.rate_max))
  ), heads AS (
    SELECT limits.job_type, head.priority, head.created_at, head.id
    FROM limits CROSS JOIN LATERAL (
      SELECT seg.id, seg.priority, seg.created_at
      FROM segments CROSS JOIN LATERAL (
        SELECT j.id, j.priority, j.created_at FROM "job_queue".jobs j
        WHERE j.status = 'pending' AND j.job_type = segments.job_type
          AND j.priority BETWEEN segments.lo AND segments.hi
          AND (j.created_at, j.id) > (segments.after_created_at, segments.after_id)
          AND j.run_at <= COALESCE($4, now())
        ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
        LIMIT limits.room
      ) AS seg
      WHERE segments.job_type = limits.job_type
      ORDER BY seg.priority DESC, seg.created_at ASC, seg.id ASC
      LIMIT limits.room
    ) AS head
    WHERE NOT limits.keyed
    UNION ALL
    SELECT eligible.job_type, eligible.priority, eligible.created_at, eligible.id
    FROM eligible JOIN limits ON limits.job_type = eligible.job_type
    WHERE eligible.n <= limits.room
  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT heads.job_type FROM heads
          ORDER BY heads.priority DESC, heads.created_at ASC, heads.id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*, limits.keyed, COALESCE(shares.take, 0) AS take
    FROM types JOIN limits ON limits.job_type = types.job_type
      LEFT JOIN shares ON shares.job_type = types.job_type
  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT seg.id, seg.priority, seg.created_at
      FROM segments CROSS JOIN LATERAL (
        SELECT j.id, j.priority, j.created_at FROM "job_queue".jobs j
        WHERE j.status = 'pending' AND j.job_type = segments.job_type
          AND j.priority BETWEEN segments.lo AND segments.hi
          AND (j.created_at, j.id) > (segments.after_created_at, segments.after_id)
          AND j.run_at <= COALESCE($4, now())
        ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
        LIMIT takes.take
        FOR UPDATE SKIP LOCKED
      ) AS seg
      WHERE segments.job_type = takes.job_type
      ORDER BY seg.priority DESC, seg.created_at ASC, seg.id ASC
      LIMIT takes.take
    ) AS locked
    WHERE takes.take > 0 AND NOT takes.keyed
    UNION ALL
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT j.id FROM "job_queue".jobs j
      WHERE j.id = ANY (ARRAY(
              SELECT heads.id FROM heads WHERE heads.job_type = takes.job_type
              ORDER BY heads.priority DESC, heads.created_at ASC, heads.id ASC
              LIMIT takes.take))
        AND j.status = 'pending'
      FOR UPDATE SKIP LOCKED
    ) AS locked
    WHERE takes.take > 0 AND takes.keyed
  ), full_keys AS (
    SELECT DISTINCT window_slots.job_type, window_slots.concurrency_key, window_slots.ordered,
           window_slots.held
    FROM window_slots
    WHERE window_slots.concurrency_key IS NOT NULL AND window_slots.per_key IS NOT NULL
      AND window_slots.held >= window_slots.per_key
  ), locked_holders AS (
    SELECT full_keys.job_type, full_keys.concurrency_key
    FROM full_keys CROSS JOIN LATERAL (
      SELECT o.id FROM "job_queue".jobs o
      WHERE o.job_type = full_keys.job_type AND o.concurrency_key = full_keys.concurrency_key
        AND o.status IN ('claimed', 'running', 'scheduled') AND (o.status IN ('claimed', 'running') OR (full_keys.ordered AND o.status = 'scheduled'
     AND (o.attempts > 0 OR o.started_at IS NOT NULL)))
      FOR SHARE SKIP LOCKED
    ) AS holder
  ), settled_keys AS (
    SELECT full_keys.job_type, full_keys.concurrency_key FROM full_keys
    WHERE (SELECT count(*) FROM locked_holders
           WHERE locked_holders.job_type = full_keys.job_type
             AND locked_holders.concurrency_key = full_keys.concurrency_key) >= full_keys.held
  ), rate_full_keys AS (
    SELECT DISTINCT window_slots.job_type, window_slots.concurrency_key,
           window_slots.window_start
    FROM window_slots
    WHERE window_slots.concurrency_key IS NOT NULL AND window_slots.rate_by_key
      AND window_slots.key_starts >= window_slots.rate_max
  ), blocked AS (
    INSERT INTO "job_queue".job_rate_blocked AS b (job_type, rate_key, opens_at)
    SELECT rate_full_keys.job_type, rate_full_keys.concurrency_key,
           (SELECT min(s.started_at) FROM "job_queue".job_rate_starts s
            WHERE s.job_type = rate_full_keys.job_type
              AND s.rate_key = rate_full_keys.concurrency_key
              AND s.started_at > rate_full_keys.window_start)
             + (COALESCE($4, clock_timestamp()) - rate_full_keys.window_start)
    FROM rate_full_keys
    ON CONFLICT (job_type, rate_key) DO UPDATE SET opens_at = EXCLUDED.opens_at
    RETURNING b.job_type
  ), set_aside AS (
    SELECT aside.id
    FROM (SELECT settled_keys.job_type, settled_keys.concurrency_key FROM settled_keys
          UNION
          SELECT rate_full_keys.job_type, rate_full_keys.concurrency_key FROM rate_full_keys)
      AS keys CROSS JOIN LATERAL (
      SELECT j.id FROM "job_queue".jobs j
      WHERE j.status = 'pending' AND j.job_type = keys.job_type
        AND j.concurrency_key = keys.concurrency_key
      ORDER BY j.id
      LIMIT 20000
      FOR UPDATE SKIP LOCKED
    ) AS aside
  ), waiting AS (
    UPDATE "job_queue".jobs AS jobs SET status = 'waiting', updated_at = COALESCE($4, now())
    FROM set_aside WHERE jobs.id = set_aside.id
    RETURNING jobs.id
  ), claimed AS (
    UPDATE "job_queue".jobs AS jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1,
      run_token = jobs.run_token + 1,
      max_attempts = COALESCE(jobs.max_attempts, candidates.max_attempts),
      backoff_base_ms = COALESCE(jobs.backoff_base_ms, candidates.backoff_base_ms),
      backoff_max_ms = COALESCE(jobs.backoff_max_ms, candidates.backoff_max_ms),
      backoff_jitter = COALESCE(jobs.backoff_jitter, candidates.backoff_jitter)
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
  ), started AS (
    INSERT INTO "job_queue".job_rate_starts (job_type, rate_key, started_at, starts)
    SELECT claimed.job_type,
           CASE WHEN limits.rate_by_key THEN claimed.concurrency_key ELSE '' END,
           COALESCE($4, clock_timestamp()), count(*)
    FROM claimed JOIN limits ON limits.job_type = claimed.job_type
    WHERE limits.rate_max IS NOT NULL
      AND (NOT limits.rate_by_key OR claimed.concurrency_key IS NOT NULL)
    GROUP BY 1, 2
    RETURNING 1
  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC;
      ELSIF pg_catalog.cardinality(p_after_job_types) > 0 THEN
        RETURN QUERY 
  WITH types AS (
    SELECT t.job_type,
           min(LEAST(COALESCE(t.cap, $3), $3)) AS cap,
           min(t.max_attempts) AS max_attempts,
           min(t.backoff_base_ms) AS backoff_base_ms,
           min(t.backoff_max_ms) AS backoff_max_ms,
           min(t.backoff_jitter) AS backoff_jitter
    FROM unnest($2::text[], $6::integer[], $7::integer[], $8::integer[], $9::integer[],
                $10::float8[])
      AS t(job_type, cap, max_attempts, backoff_base_ms, backoff_max_ms, backoff_jitter)
    WHERE t.job_type IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM "job_queue".job_types paused
                      WHERE paused.job_type = t.job_type AND paused.paused_at IS NOT NULL)
    GROUP BY t.job_type
    HAVING min(LEAST(COALESCE(t.cap, $3), $3)) > 0
  ), cursors AS (
    SELECT DISTINCT ON (c.job_type, c.priority) c.job_type, c.priority::bigint AS priority,
           c.created_at, c.id
    FROM unnest($11::text[], $12::integer[], $13::timestamptz[], $14::bigint[])
      AS c(job_type, priority, created_at, id)
    WHERE c.job_type IN (SELECT types.job_type FROM types)
      AND c.priority IS NOT NULL AND c.created_at IS NOT NULL AND c.id IS NOT NULL
    ORDER BY c.job_type, c.priority, c.created_at ASC, c.id ASC
  ), segments AS (
    SELECT cursors.job_type, cursors.priority AS lo, cursors.priority AS hi,
           cursors.created_at AS after_created_at, cursors.id AS after_id
    FROM cursors
    UNION ALL
    SELECT above.job_type, above.priority + 1, above.hi, '-infinity'::timestamptz, 0::bigint
    FROM (
      SELECT cursors.job_type, cursors.priority,
             COALESCE(lag(cursors.priority) OVER (PARTITION BY cursors.job_type
                                                  ORDER BY cursors.priority DESC) - 1,
                      2147483647::bigint) AS hi
      FROM cursors
    ) AS above
    WHERE above.priority + 1 <= above.hi
    UNION ALL
    SELECT types.job_type, (-2147483648)::bigint,
           COALESCE(min(cursors.priority) - 1, 2147483647::bigint),
           '-infinity'::timestamptz, 0::bigint
    FROM types LEFT JOIN cursors ON cursors.job_type = types.job_type
    GROUP BY types.job_type
    HAVING COALESCE(min(cursors.priority) - 1, 2147483647::bigint) >= (-2147483648)::bigint
  ), heads AS (
    SELECT types.job_type, head.priority, head.created_at, head.id
    FROM types CROSS JOIN LATERAL (
      SELECT seg.id, seg.priority, seg.created_at
      FROM segments CROSS JOIN LATERAL (
        SELECT j.id, j.priority, j.created_at FROM "job_queue".jobs j
        WHERE j.status = 'pending' AND j.job_type = segments.job_type
          AND j.priority BETWEEN segments.lo AND segments.hi
          AND (j.created_at, j.id) > (segments.after_created_at, segments.after_id)
          AND j.run_at <= COALESCE($4, now())
        ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
        LIMIT types.cap
      ) AS seg
      WHERE segments.job_type = types.job_type
      ORDER BY seg.priority DESC, seg.created_at ASC, seg.id ASC
      LIMIT types.cap
    ) AS head
    WHERE (SELECT count(*) FROM types) > 1
  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT job_type FROM heads ORDER BY priority DESC, created_at ASC, id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*,
           CASE WHEN (SELECT count(*) FROM types) > 1 THEN COALESCE(shares.take, 0)
                ELSE types.cap END AS take
    FROM types LEFT JOIN shares ON shares.job_type = types.job_type
  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT seg.id, seg.priority, seg.created_at
      FROM segments CROSS JOIN LATERAL (
        SELECT j.id, j.priority, j.created_at FROM "job_queue".jobs j
        WHERE j.status = 'pending' AND j.job_type = segments.job_type
          AND j.priority BETWEEN segments.lo AND segments.hi
          AND (j.created_at, j.id) > (segments.after_created_at, segments.after_id)
          AND j.run_at <= COALESCE($4, now())
        ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
        LIMIT takes.take
        FOR UPDATE SKIP LOCKED
      ) AS seg
      WHERE segments.job_type = takes.job_type
      ORDER BY seg.priority DESC, seg.created_at ASC, seg.id ASC
      LIMIT takes.take
    ) AS locked
    WHERE takes.take > 0
  ), claimed AS (
    UPDATE "job_queue".jobs AS jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1,
      run_token = jobs.run_token + 1,
      max_attempts = COALESCE(jobs.max_attempts, candidates.max_attempts),
      backoff_base_ms = COALESCE(jobs.backoff_base_ms, candidates.backoff_base_ms),
      backoff_max_ms = COALESCE(jobs.backoff_max_ms, candidates.backoff_max_ms),
      backoff_jitter = COALESCE(jobs.backoff_jitter, candidates.backoff_jitter)
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC;
      ELSE
        RETURN QUERY 
  WITH types AS (
    SELECT t.job_type,
           min(LEAST(COALESCE(t.cap, $3), $3)) AS cap,
           min(t.max_attempts) AS max_attempts,
           min(t.backoff_base_ms) AS backoff_base_ms,
           min(t.backoff_max_ms) AS backoff_max_ms,
           min(t.backoff_jitter) AS backoff_jitter
    FROM unnest($2::text[], $6::integer[], $7::integer[], $8::integer[], $9::integer[],
                $10::float8[])
      AS t(job_type, cap, max_attempts, backoff_base_ms, backoff_max_ms, backoff_jitter)
    WHERE t.job_type IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM "job_queue".job_types paused
                      WHERE paused.job_type = t.job_type AND paused.paused_at IS NOT NULL)
    GROUP BY t.job_type
    HAVING min(LEAST(COALESCE(t.cap, $3), $3)) > 0
  ), heads AS (
    SELECT types.job_type, head.priority, head.created_at, head.id
    FROM types CROSS JOIN LATERAL (
      SELECT j.priority, j.created_at, j.id FROM "job_queue".jobs j
      WHERE j.status = 'pending' AND j.job_type = types.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT types.cap
    ) AS head
    WHERE (SELECT count(*) FROM types) > 1
  ), shares AS (
    SELECT best.job_type, count(*) AS take
    FROM (SELECT job_type FROM heads ORDER BY priority DESC, created_at ASC, id ASC LIMIT $3) AS best
    GROUP BY best.job_type
  ), takes AS (
    SELECT types.*,
           CASE WHEN (SELECT count(*) FROM types) > 1 THEN COALESCE(shares.take, 0)
                ELSE types.cap END AS take
    FROM types LEFT JOIN shares ON shares.job_type = types.job_type
  ), candidates AS (
    SELECT locked.id, takes.max_attempts, takes.backoff_base_ms, takes.backoff_max_ms,
           takes.backoff_jitter
    FROM takes CROSS JOIN LATERAL (
      SELECT j.id FROM "job_queue".jobs j
      WHERE j.status = 'pending' AND j.job_type = takes.job_type
        AND j.run_at <= COALESCE($4, now())
      ORDER BY j.priority DESC, j.created_at ASC, j.id ASC
      LIMIT takes.take
      FOR UPDATE SKIP LOCKED
    ) AS locked
    WHERE takes.take > 0
  ), claimed AS (
    UPDATE "job_queue".jobs AS jobs SET
      status = CASE WHEN $5 THEN 'running' ELSE 'claimed' END,
      started_at = CASE WHEN $5 THEN COALESCE($4, now()) ELSE jobs.started_at END,
      worker_id = $1,
      claimed_at = COALESCE($4, now()),
      heartbeat_at = COALESCE($4, now()),
      updated_at = COALESCE($4, now()),
      attempts = jobs.attempts + 1,
      run_token = jobs.run_token + 1,
      max_attempts = COALESCE(jobs.max_attempts, candidates.max_attempts),
      backoff_base_ms = COALESCE(jobs.backoff_base_ms, candidates.backoff_base_ms),
      backoff_max_ms = COALESCE(jobs.backoff_max_ms, candidates.backoff_max_ms),
      backoff_jitter = COALESCE(jobs.backoff_jitter, candidates.backoff_jitter)
    FROM candidates
    WHERE jobs.id = candidates.id
    RETURNING jobs.*
  )
  SELECT * FROM claimed ORDER BY priority DESC, created_at ASC, id ASC;
      END IF;
    END
    $function$;
-- privileges: <owner>: EXECUTE

CREATE OR REPLACE FUNCTION job_queue.job_unique_state_counts(states smallint, status text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
      SELECT CASE
        WHEN states IS NULL THEN status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
        ELSE (states & CASE status
                WHEN 'scheduled' THEN 1 WHEN 'pending' THEN 2 WHEN 'waiting' THEN 4
                WHEN 'claimed' THEN 8 WHEN 'running' THEN 16 WHEN 'completed' THEN 32
                WHEN 'failed' THEN 64 WHEN 'cancelled' THEN 128 ELSE 0 END) <> 0
      END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.jobs_dead_letter()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    DECLARE
      target text;
      failed_at timestamptz;
    BEGIN
      SELECT t.dead_letter_type INTO target
      FROM "job_queue".job_types t WHERE t.job_type = NEW.job_type;
      IF target IS NULL THEN
        RETURN NULL;
      END IF;
      failed_at := COALESCE(NEW.completed_at, pg_catalog.now());
      INSERT INTO "job_queue".jobs
        (job_type, data, priority, status, run_at, meta, created_at, updated_at)
      VALUES (target,
              pg_catalog.jsonb_build_object(
                'data', NEW.data,
                'error', pg_catalog.split_part(NEW.last_error, E'\n', 1),
                'sourceJobId', NEW.id::text),
              NEW.priority, 'pending', failed_at, NEW.meta, failed_at, failed_at);
      RETURN NULL;
    END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.jobs_keep_dependencies()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    BEGIN
      IF OLD.has_dependants AND EXISTS (
        SELECT 1 FROM "job_queue".job_dependencies e
          JOIN "job_queue".jobs w ON w.id = e.job_id
        WHERE e.dependency_id = OLD.id AND w.status NOT IN ('completed', 'failed', 'cancelled')
      ) THEN
        RETURN NULL;
      END IF;
      IF OLD.on_dependency_failure IS NOT NULL THEN
        DELETE FROM "job_queue".job_dependencies e WHERE e.job_id = OLD.id;
      END IF;
      RETURN OLD;
    END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.jobs_notify_inserted()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    BEGIN
      PERFORM pg_catalog.pg_notify('job_queue_jobs_inserted', '');
      RETURN NULL;
    END
    $function$;
-- privileges: <owner>: EXECUTE

CREATE OR REPLACE FUNCTION job_queue.jobs_release_key_slot()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
    DECLARE
      per_key integer;
      ordered boolean;
      free_slots bigint;
    BEGIN
      -- Most releases find nothing waiting for their key: one probe of jobs_key_waiting_idx.
      -- In the index's order, so the plan reads it, however many jobs wait.
      PERFORM 1 FROM "job_queue".jobs w
      WHERE w.status = 'waiting' AND w.job_type = NEW.job_type
        AND w.concurrency_key = NEW.concurrency_key
      ORDER BY w.priority DESC, w.created_at ASC, w.id ASC
      LIMIT 1;
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      SELECT t.concurrency_per_key, t.ordered_keys INTO per_key, ordered
      FROM "job_queue".job_types t WHERE t.job_type = NEW.job_type;
      IF per_key IS NULL THEN
        RETURN NULL;
      END IF;
      SELECT per_key - count(*) INTO free_slots
      FROM (
      SELECT o.id FROM "job_queue".jobs o
      WHERE o.job_type = NEW.job_type AND o.concurrency_key = NEW.concurrency_key
        AND o.status IN ('claimed', 'running', 'scheduled') AND (o.status IN ('claimed', 'running') OR (ordered AND o.status = 'scheduled'
     AND (o.attempts > 0 OR o.started_at IS NOT NULL)))) AS holders;
      IF free_slots > 0 THEN
        UPDATE "job_queue".jobs AS j SET status = 'pending', updated_at = pg_catalog.now()
        WHERE j.id IN (
          SELECT w.id FROM "job_queue".jobs w
          WHERE w.status = 'waiting' AND w.job_type = NEW.job_type
            AND w.concurrency_key = NEW.concurrency_key
          ORDER BY w.priority DESC, w.created_at ASC, w.id ASC
          LIMIT free_slots
          FOR UPDATE SKIP LOCKED);
        IF FOUND THEN
          PERFORM pg_catalog.pg_notify('job_queue_jobs_inserted', 'pending-again');
        END IF;
      END IF;
      RETURN NULL;
    END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.jobs_reopen_dependants()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
    BEGIN
      WITH dependants AS (
          SELECT w.id FROM "job_queue".job_dependencies e
            JOIN "job_queue".jobs w ON w.id = e.job_id
          WHERE e.dependency_id = NEW.id AND w.status = 'blocked'
          ORDER BY w.id
          FOR NO KEY UPDATE OF w)
      UPDATE "job_queue".jobs AS w SET
        unfinished_dependencies = w.unfinished_dependencies + 1,
        updated_at = pg_catalog.now()
      FROM dependants
      WHERE w.id = dependants.id AND w.status = 'blocked';
      RETURN NULL;
    END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.jobs_resolve_dependants()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
    DECLARE
      dependency_failed boolean := NEW.status <> 'completed';
      moved record;
      woken boolean := false;
    BEGIN
      FOR moved IN
        WITH dependants AS (
          SELECT w.id FROM "job_queue".job_dependencies e
            JOIN "job_queue".jobs w ON w.id = e.job_id
          WHERE e.dependency_id = NEW.id AND w.status = 'blocked'
          ORDER BY w.id
          FOR NO KEY UPDATE OF w)
        UPDATE "job_queue".jobs AS w SET
          unfinished_dependencies = w.unfinished_dependencies - 1,
          status = CASE
            WHEN dependency_failed AND w.on_dependency_failure = 'fail' THEN 'failed'
            WHEN w.unfinished_dependencies > 1 THEN 'blocked'
            WHEN w.run_at > pg_catalog.clock_timestamp() THEN 'scheduled'
            ELSE 'pending' END,
          last_error = CASE WHEN dependency_failed AND w.on_dependency_failure = 'fail'
            THEN pg_catalog.format('Dependency %s (%s) %s', NEW.id, NEW.job_type,
                   CASE NEW.status WHEN 'failed' THEN 'failed'::text ELSE 'was cancelled'::text END)
            ELSE w.last_error END,
          completed_at = CASE WHEN dependency_failed AND w.on_dependency_failure = 'fail'
            THEN pg_catalog.now() ELSE w.completed_at END,
          updated_at = pg_catalog.now()
        FROM dependants
        WHERE w.id = dependants.id AND w.status = 'blocked'
        RETURNING w.id, w.job_type, w.status, w.attempts, w.progress, w.current_stage
      LOOP
        IF moved.status = 'pending' THEN
          woken := true;
        ELSIF moved.status = 'failed' THEN
          PERFORM pg_catalog.pg_notify('job_queue_job_events',
            '{"o":' || pg_catalog.to_json(''::text)::text || ',"e":[' ||
    pg_catalog.json_build_array(moved.id::text, moved.job_type, moved.status, moved.attempts,
      moved.progress, moved.current_stage, 'failed'::text)::text || ']}');
        END IF;
      END LOOP;
      IF woken THEN
        PERFORM pg_catalog.pg_notify('job_queue_jobs_inserted', 'pending-again');
      END IF;
      RETURN NULL;
    END
    $function$;
-- privileges: default

CREATE OR REPLACE FUNCTION job_queue.prune_jobs(p_lock_key bigint, p_completed_ms double precision, p_failed_ms double precision, p_cancelled_ms double precision, p_older_than_ms double precision, p_statuses text[], p_types text[], p_limit integer, p_now timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(held boolean, deleted integer)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET jit TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
    BEGIN
      RETURN QUERY 
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS got
  ), types AS (
    (SELECT j.job_type FROM "job_queue".jobs j
     WHERE j.status IN ('completed', 'failed', 'cancelled') AND (SELECT lock.got FROM lock)
     ORDER BY j.job_type LIMIT 1)
    UNION ALL
    SELECT (SELECT j.job_type FROM "job_queue".jobs j
            WHERE j.status IN ('completed', 'failed', 'cancelled')
              AND j.job_type > types.job_type
            ORDER BY j.job_type LIMIT 1)
    FROM types WHERE types.job_type IS NOT NULL
  ), rules AS (
    SELECT types.job_type, s.status,
           CASE WHEN $5::float8 IS NOT NULL THEN $5::float8
                WHEN t.retention_updated_at IS NULL THEN s.default_ms
                WHEN s.status = 'completed' THEN t.completed_retention_ms::float8
                WHEN s.status = 'failed' THEN t.failed_retention_ms::float8
                ELSE t.cancelled_retention_ms::float8 END AS keep_ms
    FROM types
      CROSS JOIN (VALUES ('completed'::text, $2::float8), ('failed'::text, $3::float8),
                         ('cancelled'::text, $4::float8)) AS s(status, default_ms)
      LEFT JOIN "job_queue".job_types t ON t.job_type = types.job_type
    WHERE types.job_type IS NOT NULL
      AND ($6::text[] IS NULL OR s.status = ANY ($6::text[]))
      AND ($7::text[] IS NULL OR types.job_type = ANY ($7::text[]))
  ), doomed AS (
    SELECT old.id FROM rules CROSS JOIN LATERAL (
      SELECT j.id FROM "job_queue".jobs j
      WHERE j.status IN ('completed', 'failed', 'cancelled')
        AND j.job_type = rules.job_type AND j.status = rules.status
        AND j.completed_at < COALESCE($9::timestamptz, pg_catalog.now()) - rules.keep_ms * interval '1 millisecond'
      ORDER BY j.completed_at
      LIMIT $8::integer
      FOR UPDATE OF j SKIP LOCKED
    ) AS old
    WHERE rules.keep_ms IS NOT NULL
    LIMIT $8::integer
  ), gone AS (
    DELETE FROM "job_queue".jobs AS j USING doomed
    WHERE j.id = doomed.id AND j.status IN ('completed', 'failed', 'cancelled')
    RETURNING j.id
  )
  SELECT (SELECT lock.got FROM lock), pg_catalog.count(*)::integer FROM gone;
    END
    $function$;
-- privileges: <owner>: EXECUTE

CREATE OR REPLACE FUNCTION job_queue.prune_jobs(p_lock_key bigint, p_completed_ms double precision, p_failed_ms double precision, p_cancelled_ms double precision, p_older_than_ms double precision, p_statuses text[], p_types text[], p_limit integer, p_now timestamp with time zone, p_after_type text, p_after_status text, p_after_us bigint, p_after_id bigint)
 RETURNS TABLE(held boolean, deleted integer, kept integer, read integer, last_type text, last_status text, last_us bigint, last_id bigint)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET jit TO 'off'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_bitmapscan TO 'off'
AS $function$
    BEGIN
      RETURN QUERY 
  WITH RECURSIVE lock AS (
    SELECT CASE WHEN $1::bigint IS NULL THEN true
                ELSE pg_catalog.pg_try_advisory_xact_lock($1::bigint) END AS got
  ), types AS (
    (SELECT j.job_type FROM "job_queue".jobs j
     WHERE j.status IN ('completed', 'failed', 'cancelled') AND (SELECT lock.got FROM lock) AND j.job_type >= COALESCE($10::text, '')
     ORDER BY j.job_type LIMIT 1)
    UNION ALL
    SELECT (SELECT j.job_type FROM "job_queue".jobs j
            WHERE j.status IN ('completed', 'failed', 'cancelled')
              AND j.job_type > types.job_type
            ORDER BY j.job_type LIMIT 1)
    FROM types WHERE types.job_type IS NOT NULL
  ), rules AS (
    SELECT types.job_type, s.status,
           CASE WHEN $5::float8 IS NOT NULL THEN $5::float8
                WHEN t.retention_updated_at IS NULL THEN s.default_ms
                WHEN s.status = 'completed' THEN t.completed_retention_ms::float8
                WHEN s.status = 'failed' THEN t.failed_retention_ms::float8
                ELSE t.cancelled_retention_ms::float8 END AS keep_ms,
           COALESCE(types.job_type = $10::text AND s.status = $11::text, false) AS at_cursor,
           CASE WHEN types.job_type = $10::text AND s.status = $11::text
                THEN 'epoch'::timestamptz + $12::bigint * interval '1 microsecond'
                ELSE '-infinity'::timestamptz END AS after_at
    FROM types
      CROSS JOIN (VALUES ('cancelled'::text, $4::float8), ('completed'::text, $2::float8),
                         ('failed'::text, $3::float8)) AS s(status, default_ms)
      LEFT JOIN "job_queue".job_types t ON t.job_type = types.job_type
    WHERE types.job_type IS NOT NULL
      AND ($6::text[] IS NULL OR s.status = ANY ($6::text[]))
      AND ($7::text[] IS NULL OR types.job_type = ANY ($7::text[]))
      AND ($10::text IS NULL OR (types.job_type, s.status) >= ($10::text, $11::text))
    ORDER BY types.job_type, s.status
  ), page AS (
    SELECT rules.job_type, rules.status, old.id, old.completed_at, old.kept
    FROM rules CROSS JOIN LATERAL (
      SELECT j.id, j.completed_at,
             j.has_dependants AND EXISTS (
               SELECT 1 FROM "job_queue".job_dependencies e
                 JOIN "job_queue".jobs w ON w.id = e.job_id
               WHERE e.dependency_id = j.id AND w.status NOT IN ('completed', 'failed', 'cancelled')) AS kept
      FROM "job_queue".jobs j
      WHERE j.status IN ('completed', 'failed', 'cancelled')
        AND j.job_type = rules.job_type AND j.status = rules.status
        AND j.completed_at < COALESCE($9::timestamptz, pg_catalog.now()) - rules.keep_ms * interval '1 millisecond'
        AND j.completed_at >= rules.after_at
        AND (NOT rules.at_cursor OR (j.completed_at, j.id) > (rules.after_at, $13::bigint))
      ORDER BY j.completed_at, j.id
      LIMIT $8::integer
      FOR UPDATE OF j SKIP LOCKED
    ) AS old
    WHERE rules.keep_ms IS NOT NULL
    LIMIT $8::integer
  ), gone AS (
    DELETE FROM "job_queue".jobs AS j USING page
    WHERE j.id = page.id AND NOT page.kept AND j.status IN ('completed', 'failed', 'cancelled')
    RETURNING j.id
  ), last AS (
    SELECT page.job_type, page.status, page.completed_at, page.id FROM page
    ORDER BY page.job_type DESC, page.status DESC, page.completed_at DESC, page.id DESC
    LIMIT 1
  )
  SELECT (SELECT lock.got FROM lock) AS held,
         (SELECT pg_catalog.count(*)::integer FROM gone) AS deleted,
         (SELECT pg_catalog.count(*) FILTER (WHERE page.kept)::integer FROM page) AS kept,
         (SELECT pg_catalog.count(*)::integer FROM page) AS read,
         last.job_type AS last_type, last.status AS last_status,
         (EXTRACT(epoch FROM last.completed_at) * 1000000)::bigint AS last_us,
         last.id AS last_id
  FROM (SELECT) AS one LEFT JOIN last ON true;
    END
    $function$;
-- privileges: <owner>: EXECUTE
