'use strict';
// Timing helpers: every wait in the bench is bounded in time.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** High-resolution monotonic milliseconds. */
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * Polls `check()` (async, returns truthy when done) every `intervalMs` until it is truthy;
 * throws once `timeoutMs` has passed. Returns the truthy value.
 */
async function waitFor(check, { intervalMs = 50, timeoutMs, what }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Rejects when `promise` has not settled within `ms`. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

module.exports = { sleep, nowMs, waitFor, withTimeout };
