import { PruneOptions } from '../../interfaces/prune-options.interface';
import { RedriveOptions } from '../../interfaces/redrive-options.interface';
import { UsageError } from '../cli.errors';
import { Command, listOption, stringOption } from '../command';
import { usageOf } from '../cli.messages';
import { confirmBulk, withProgress } from '../confirm';
import { pointInPast } from '../duration';
import { plain } from '../terminal';

export const redriveCommand: Command = {
  name: 'redrive',
  usage: 'redrive [--type TYPE] [--since TIME] [--id ID]... [--yes]',
  summary: 'failed jobs back to pending with fresh attempts (--since: an ISO time or 30d, 12h …)',
  bulk: true,
  options: {
    type: { type: 'string' },
    since: { type: 'string' },
    id: { type: 'string', multiple: true },
  },
  run: async ({ options, out, io, now, withQueue }) => {
    const since = stringOption(options, 'since');
    const redrive: RedriveOptions = {};
    const type = stringOption(options, 'type');
    if (type !== undefined) redrive.type = type;
    if (since !== undefined) redrive.since = pointInPast('--since', since, now);
    const ids = listOption(options, 'id');
    if (ids !== undefined) redrive.ids = ids;
    const which = [
      type === undefined ? 'every type' : `type ${plain(type)}`,
      redrive.since ? `failed since ${redrive.since.toISOString()}` : undefined,
      ids ? `ids ${ids.map((id) => plain(id)).join(', ')}` : undefined,
    ].filter(Boolean);
    const redriven = await withQueue(async (queue) => {
      await confirmBulk(
        io,
        options.yes === true,
        `Redrive failed jobs (${which.join(', ')})`,
        usageOf(redriveCommand),
      );
      return withProgress(io, out.json, 'redriving', queue.redrive({ ...redrive, report: true }));
    });
    const { uniqueKey, locked } = redriven.skipped;
    const left = [
      uniqueKey > 0 ? `${uniqueKey} left failed: another job holds its unique key` : '',
      locked > 0 ? `${locked} held by another redrive or retry` : '',
    ].filter(Boolean);
    out.result({ redriven: redriven.moved, skipped: redriven.skipped }, () => [
      `${redriven.moved} failed job(s) back to pending` +
        (left.length > 0 ? `; ${left.join('; ')}` : ''),
    ]);
  },
};

export const pruneCommand: Command = {
  name: 'prune',
  usage: 'prune [--older-than TIME] [--status STATUS]... [--type TYPE]... [--yes]',
  summary:
    "deletes finished jobs (without --older-than: as each type's retention says; TIME: 30d, 12h … or an ISO time)",
  bulk: true,
  options: {
    'older-than': { type: 'string' },
    status: { type: 'string', multiple: true },
    type: { type: 'string', multiple: true },
  },
  run: async ({ options, out, io, now, withQueue }) => {
    const prune: PruneOptions = {};
    const olderThan = stringOption(options, 'older-than');
    if (olderThan !== undefined) {
      const ms = now - pointInPast('--older-than', olderThan, now).getTime();
      if (ms < 0)
        throw new UsageError(`--older-than: ${olderThan} is in the future`, usageOf(pruneCommand));
      prune.olderThanMs = ms;
    }
    const statuses = listOption(options, 'status');
    if (statuses !== undefined) prune.statuses = statuses as PruneOptions['statuses'];
    const types = listOption(options, 'type');
    if (types !== undefined) prune.types = types;
    const which = [
      olderThan === undefined
        ? "past each type's retention"
        : `finished before ${new Date(now - prune.olderThanMs!).toISOString()}`,
      statuses
        ? `statuses ${statuses.map((s) => plain(s)).join(', ')}`
        : 'completed, failed, cancelled',
      types ? `types ${types.map((t) => plain(t)).join(', ')}` : 'every type',
    ];
    const pruned = await withQueue(async (queue) => {
      await confirmBulk(
        io,
        options.yes === true,
        `Delete finished jobs (${which.join('; ')})`,
        usageOf(pruneCommand),
      );
      return withProgress(io, out.json, 'pruning', queue.prune({ ...prune, report: true }));
    });
    const kept = pruned.kept.dependants;
    out.result({ pruned: pruned.deleted, kept: pruned.kept }, () => [
      `${pruned.deleted} finished job(s) deleted` +
        (kept > 0 ? `; ${kept} kept: unfinished jobs depend on them` : ''),
    ]);
  },
};
