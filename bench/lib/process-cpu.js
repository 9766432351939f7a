'use strict';
// CPU time of a process on this machine, read from /proc: the bench's PostgreSQL server runs here.
const fs = require('node:fs');

const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** User + system CPU time (ms) of process `pid`; throws when it is gone or not on this machine. */
function processCpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS; // utime + stime
}

module.exports = { processCpuMs };
