import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource, EntityManager } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { requirePeer } from '../instrumentation/require-peer';
import { optionValidator } from '../validation/option.validator';

/** What the queue reads of `@nestjs-cls/transactional`'s `TransactionHost`. */
interface TransactionHostLike {
  isTransactionActive(): boolean;
  readonly tx: unknown;
}

const PACKAGE = '@nestjs-cls/transactional';

/**
 * The app's ambient transaction (`transactionHost` option): the `TransactionHost` the app
 * registered with `ClsPluginTransactional`, found at init by its token (`strict: false`: it
 * lives in the app's `ClsModule`). The package is required only then, and only with the
 * option, so apps without it never load it.
 */
@Injectable()
export class AmbientTransaction implements OnModuleInit {
  private host: TransactionHostLike | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    const name = this.options.transactionHost;
    if (name === false) return;
    requirePeer('JobQueueModule option transactionHost', PACKAGE);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { getTransactionHostToken } = require(PACKAGE) as {
      getTransactionHostToken(connectionName?: string): unknown;
    };
    const token = getTransactionHostToken(name === true ? undefined : name);
    let host: TransactionHostLike;
    try {
      host = this.moduleRef.get(token as string, { strict: false });
    } catch {
      return optionValidator.fail(
        'transactionHost',
        name,
        'a TransactionHost the app registers: ClsModule.forRoot({ plugins: [new ' +
          'ClsPluginTransactional({ adapter: new TransactionalAdapterTypeOrm(...) })] })' +
          (name === true ? '' : ` with connectionName '${name}'`),
      );
    }
    // Outside a transaction `tx` is the adapter's own manager: it must be the queue's database.
    const manager = host.tx as Partial<EntityManager> | undefined;
    if (manager?.dataSource !== this.dataSource) {
      optionValidator.fail(
        'transactionHost',
        name,
        "a TransactionHost whose TypeORM adapter uses the queue's data source " +
          '(TransactionalAdapterTypeOrm with the same DataSource)',
      );
    }
    this.host = host;
  }

  /** The active transaction's manager, if the app is in one; `undefined` otherwise. */
  manager(): EntityManager | undefined {
    const host = this.host;
    if (!host || !host.isTransactionActive()) return undefined;
    return host.tx as EntityManager;
  }
}
