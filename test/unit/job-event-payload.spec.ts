import { JobStatus } from 'nest-pg-job-queue';
import {
  delivered,
  jobEvent,
  parseJobEventNotification,
} from '../../libs/job-queue/src/events/job-event-payload';
import { JOB_EVENT_NAMES } from '../../libs/job-queue/src/job-queue.constants';

describe('job event payloads', () => {
  it('reads a notification of the events channel', () => {
    const payload = JSON.stringify({
      o: 'host:1:abc',
      e: [
        ['5', 'email', 'running', 1, 0, null, 'started'],
        ['6', 'email', 'completed', 2, 100, 'done', 'completed'],
      ],
    });
    expect(parseJobEventNotification(payload)).toEqual({
      origin: 'host:1:abc',
      events: [
        {
          event: 'started',
          id: '5',
          type: 'email',
          status: 'running',
          attempt: 1,
          progress: 0,
          stage: null,
        },
        {
          event: 'completed',
          id: '6',
          type: 'email',
          status: 'completed',
          attempt: 2,
          progress: 100,
          stage: 'done',
        },
      ],
    });
  });

  it('ignores what is not ours: not JSON, no origin, bad items', () => {
    expect(parseJobEventNotification(undefined)).toBeUndefined();
    expect(parseJobEventNotification('hello')).toBeUndefined();
    expect(parseJobEventNotification('{"e":[]}')).toBeUndefined();
    expect(
      parseJobEventNotification(
        JSON.stringify({ o: 'w', e: [['5', 'x', 'running', 1, 0, null, 'exploded'], 7] }),
      ),
    ).toEqual({ origin: 'w', events: [] });
  });

  it('a rescue on the last attempt is also the job’s failed event', () => {
    const base = { id: '1', jobType: 't', attempts: 3, progress: 0, currentStage: null };
    const lastTry = jobEvent('rescued', { ...base, status: JobStatus.Failed });
    expect(delivered(lastTry).map((e) => e.event)).toEqual(['rescued', 'failed']);
    const again = jobEvent('rescued', { ...base, status: JobStatus.Scheduled });
    expect(delivered(again).map((e) => e.event)).toEqual(['rescued']);
  });

  it('names the same events as the public type', () => {
    expect([...JOB_EVENT_NAMES].sort()).toEqual([
      'cancelled',
      'completed',
      'failed',
      'progress',
      'rescued',
      'retrying',
      'snoozed',
      'started',
    ]);
  });
});
