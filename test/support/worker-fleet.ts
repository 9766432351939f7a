import { DataSource } from 'typeorm';
import { QueueService } from 'nest-pg-job-queue';
import { ChildWorkers, WorkerProcess, WorkerProcessConfig } from './child-workers';
import { createTestDatabase, TestDatabase } from './database';
import { createQueueTestingModule, QueueTestingModule } from './test-app';

/** A test file's worker processes, and the enqueue-only producer it drives them with. */
export interface WorkerFleet {
  /** The producer's queue; read it once the helper's `beforeAll` has run. */
  readonly queue: QueueService;
  /** The producer's data source, on the file's database. */
  readonly dataSource: DataSource;
  /** The worker processes, each ready (claiming and listening). */
  readonly workers: WorkerProcess[];
  /** The file's database, for `spawnReady`'s configs. */
  readonly databaseUrl: string;
  /** Spawns more workers (say, one restarting) and waits until each is ready; killed in afterAll. */
  spawnReady(configs: WorkerProcessConfig[]): Promise<WorkerProcess[]>;
}

export interface WorkerFleetOptions {
  /** Statements run on the file's database before any worker starts (side tables, triggers). */
  setup: string[];
  /** The worker processes to spawn, given the file's database URL. */
  workers: (databaseUrl: string) => WorkerProcessConfig[];
  /** How long each worker may take to be ready. */
  bootDeadlineMs: number;
}

/**
 * Registers a `beforeAll` (60 s) that creates the file's database and an enqueue-only producer on
 * it, runs `setup` there, then spawns the `workers` together and waits until each is ready
 * (claiming and listening before the first job exists); and an `afterAll` that SIGKILLs every
 * worker still alive, closes the producer and drops the database.
 */
export function useWorkerFleet({
  setup,
  workers,
  bootDeadlineMs,
}: WorkerFleetOptions): WorkerFleet {
  const children = new ChildWorkers();
  let db: TestDatabase;
  let producer: QueueTestingModule | undefined;
  let spawned: WorkerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    producer = await createQueueTestingModule({ url: db.url });
    for (const statement of setup) await producer.dataSource.query(statement);
    spawned = await children.spawnReady(workers(db.url), bootDeadlineMs);
  }, 60_000);

  afterAll(async () => {
    await children.killAll();
    await producer?.close();
    await db?.drop();
  });

  const started = (): QueueTestingModule => {
    if (!producer) throw new Error('useWorkerFleet: the producer is made in beforeAll');
    return producer;
  };
  return {
    get queue(): QueueService {
      return started().queue;
    },
    get dataSource(): DataSource {
      return started().dataSource;
    },
    get workers(): WorkerProcess[] {
      return spawned;
    },
    get databaseUrl(): string {
      started();
      return db.url;
    },
    spawnReady: (configs) => children.spawnReady(configs, bootDeadlineMs),
  };
}
