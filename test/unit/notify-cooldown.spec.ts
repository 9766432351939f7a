import {
  NOTIFY_COOLDOWN_MS,
  NotifyCooldown,
} from '../../libs/job-queue/src/worker/notify-cooldown';

describe('NotifyCooldown: when an insert notification may wake a poll', () => {
  const t0 = 1_000_000;

  it('lets the first notification poll at once', () => {
    expect(new NotifyCooldown().waitMs(t0)).toBe(0);
  });

  it('keeps polling at once while notified polls find jobs', () => {
    const cooldown = new NotifyCooldown();
    for (let i = 0; i < 5; i++) {
      cooldown.polled(1, t0 + i);
      expect(cooldown.waitMs(t0 + i + 1)).toBe(0);
    }
  });

  it('after a notified poll that found nothing, waits until a period after it started', () => {
    const cooldown = new NotifyCooldown();
    cooldown.polled(0, t0);
    expect(cooldown.waitMs(t0 + 1)).toBe(NOTIFY_COOLDOWN_MS - 1);
    expect(cooldown.waitMs(t0 + NOTIFY_COOLDOWN_MS - 10)).toBe(10);
    // A quiet spell as long as the period: the next notification polls at once again.
    expect(cooldown.waitMs(t0 + NOTIFY_COOLDOWN_MS)).toBe(0);
    expect(cooldown.waitMs(t0 + 10 * NOTIFY_COOLDOWN_MS)).toBe(0);
  });

  it('a poll that finds jobs ends the cooldown', () => {
    const cooldown = new NotifyCooldown(100);
    cooldown.polled(0, t0);
    expect(cooldown.waitMs(t0 + 20)).toBe(80);
    cooldown.polled(3, t0 + 30);
    expect(cooldown.waitMs(t0 + 31)).toBe(0);
  });
});
