import {
  ClaimCursors,
  HEAD_RESCAN_MS,
  MAX_CURSORS_PER_TYPE,
} from '../../libs/job-queue/src/worker/claim-cursors';
import { ClaimAfter, ClaimPosition } from '../../libs/job-queue/src/sql/claim-job-batch.query';

const NONE: ClaimAfter = { jobTypes: [], priorities: [], createdAt: [], ids: [] };

// Microseconds a Date would drop: the cursor must hand back PostgreSQL's text unchanged.
const end = (jobType: string, priority: number, id: string, micros = '123456'): ClaimPosition => ({
  jobType,
  priority,
  createdAt: `2024-05-01 12:00:00.${micros}+00`,
  id,
});

/** Cursors on a clock the test moves by hand, past their first claim (from the heads). */
const cursorsAt = (clock: { ms: number }): ClaimCursors => {
  const cursors = new ClaimCursors(() => clock.ms);
  expect(cursors.forClaim()).toEqual(NONE);
  return cursors;
};

/** The (type, priority) pairs `after` names, `type:priority`, sorted. */
const keysOf = (after: ClaimAfter): string[] =>
  after.jobTypes.map((jobType, i) => `${jobType}:${after.priorities[i]}`).sort();

describe('ClaimCursors: where each claim resumes, and when it reads from the heads', () => {
  it('reads from the heads at the first claim, however many cursors it holds', () => {
    const cursors = new ClaimCursors(() => 0);
    cursors.advance([end('a', 100, '7')]);
    expect(cursors.forClaim()).toEqual(NONE);
    expect(cursors.size).toBe(1);
  });

  it('resumes after advance, in aligned arrays, the createdAt text kept exactly', () => {
    const clock = { ms: 0 };
    const cursors = cursorsAt(clock);
    cursors.advance([end('a', 100, '7', '000001'), end('b', 5, '9', '999999')]);
    clock.ms = HEAD_RESCAN_MS - 1;
    const after = cursors.forClaim();
    const rows = after.jobTypes.map((jobType, i) => ({
      jobType,
      priority: after.priorities[i],
      createdAt: after.createdAt[i],
      id: after.ids[i],
    }));
    expect([after.priorities, after.createdAt, after.ids].map((a) => a.length)).toEqual([2, 2, 2]);
    expect(rows).toEqual(
      expect.arrayContaining([
        { jobType: 'a', priority: 100, createdAt: '2024-05-01 12:00:00.000001+00', id: '7' },
        { jobType: 'b', priority: 5, createdAt: '2024-05-01 12:00:00.999999+00', id: '9' },
      ]),
    );
    expect(rows).toHaveLength(2);
    // Within HEAD_RESCAN_MS every claim resumes.
    expect(cursors.forClaim()).toEqual(after);
  });

  it('reads from the heads once HEAD_RESCAN_MS passed since the last claim from them', () => {
    const clock = { ms: 1_000_000 };
    const cursors = cursorsAt(clock);
    cursors.advance([end('a', 100, '7')]);
    clock.ms += HEAD_RESCAN_MS - 1;
    expect(cursors.forClaim().ids).toEqual(['7']);
    clock.ms += 1; // HEAD_RESCAN_MS since the first claim
    expect(cursors.forClaim()).toEqual(NONE);
    // That claim from the heads counts: the next ones resume again, for HEAD_RESCAN_MS.
    expect(cursors.forClaim().ids).toEqual(['7']);
    clock.ms += HEAD_RESCAN_MS - 1;
    expect(cursors.forClaim().ids).toEqual(['7']);
    clock.ms += 1;
    expect(cursors.forClaim()).toEqual(NONE);
    expect(cursors.forClaim().ids).toEqual(['7']);
  });

  it('reads from the heads at the claim after rescanSoon(), once', () => {
    const clock = { ms: 0 };
    const cursors = cursorsAt(clock);
    cursors.advance([end('a', 100, '7')]);
    cursors.rescanSoon();
    expect(cursors.forClaim()).toEqual(NONE);
    expect(cursors.forClaim().ids).toEqual(['7']);
    // Keeps the cursors: the claim from the heads does not forget them.
    expect(cursors.size).toBe(1);
  });

  it('replaces the position of a priority advanced again, even by an earlier one', () => {
    const clock = { ms: 0 };
    const cursors = cursorsAt(clock);
    cursors.advance([end('a', 100, '7'), end('a', 50, '3')]);
    cursors.advance([end('a', 100, '12', '500000')]);
    let after = cursors.forClaim();
    expect(cursors.size).toBe(2);
    expect(keysOf(after)).toEqual(['a:100', 'a:50']);
    expect(after.ids[after.priorities.indexOf(100)]).toBe('12');
    expect(after.createdAt[after.priorities.indexOf(100)]).toBe('2024-05-01 12:00:00.500000+00');
    expect(after.ids[after.priorities.indexOf(50)]).toBe('3');
    // After a claim from the heads the end may be before the old cursor: it is taken as is.
    cursors.advance([end('a', 100, '2', '000000')]);
    after = cursors.forClaim();
    expect(after.ids[after.priorities.indexOf(100)]).toBe('2');
    expect(cursors.size).toBe(2);
  });

  it(`keeps ${MAX_CURSORS_PER_TYPE} priorities per type, forgetting the one advanced longest ago`, () => {
    expect(MAX_CURSORS_PER_TYPE).toBe(8);
    const clock = { ms: 0 };
    const cursors = cursorsAt(clock);
    // Type b: two priorities, before and after a's; they must not count towards a's.
    cursors.advance([end('b', 1, '100'), end('b', 2, '101')]);
    // Type a: priorities 1..8, each in its own claim, then 1 again: 2 is now the oldest.
    for (let priority = 1; priority <= MAX_CURSORS_PER_TYPE; priority++) {
      cursors.advance([end('a', priority, String(priority))]);
    }
    cursors.advance([end('a', 1, '21')]);
    cursors.advance([end('b', 3, '102')]);
    expect(cursors.size).toBe(MAX_CURSORS_PER_TYPE + 3);

    cursors.advance([end('a', 9, '9')]); // the 9th priority of a
    expect(cursors.size).toBe(MAX_CURSORS_PER_TYPE + 3);
    const after = cursors.forClaim();
    expect(keysOf(after)).toEqual(
      ['a:1', 'a:3', 'a:4', 'a:5', 'a:6', 'a:7', 'a:8', 'a:9', 'b:1', 'b:2', 'b:3'].sort(),
    );
    expect(
      after.ids[after.jobTypes.findIndex((t, i) => t === 'a' && after.priorities[i] === 1)],
    ).toBe('21');

    // Several of one type in one claim: the claim's order decides, its last ones are kept.
    cursors.advance([10, 11, 12].map((priority) => end('a', priority, `p${priority}`)));
    expect(keysOf(cursors.forClaim()).filter((key) => key.startsWith('a:'))).toEqual(
      ['a:1', 'a:10', 'a:11', 'a:12', 'a:6', 'a:7', 'a:8', 'a:9'].sort(),
    );
    expect(keysOf(cursors.forClaim()).filter((key) => key.startsWith('b:'))).toEqual([
      'b:1',
      'b:2',
      'b:3',
    ]);
  });
});
