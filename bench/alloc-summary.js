'use strict';
// node bench/alloc-summary.js <file.heapprofile> [--jobs=50000] [--top=25]: what a worker
// process allocated (a profile of `npm run bench -- --alloc-prof`), in bytes per job, by the
// function that allocated it, then by package. Boot is included: a run of 50,000 jobs spreads it
// thin, and the same boot is in every variant.
const fs = require('node:fs');

const option = (name, fallback) => {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given ? Number(given.slice(name.length + 3)) : fallback;
};
const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error('usage: node bench/alloc-summary.js <file.heapprofile> [--jobs=50000] [--top=25]');
  process.exit(2);
}
const JOBS = option('jobs', 50_000);
const TOP = option('top', 25);

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byFunction = new Map();
const byPackage = new Map();
let total = 0;
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
const pending = [profile.head];
while (pending.length > 0) {
  const node = pending.pop();
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/.*node_modules\//, '');
  total += node.selfSize;
  add(byFunction, `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`, node.selfSize);
  add(byPackage, where.split('/').slice(0, 2).join('/') || functionName, node.selfSize);
  pending.push(...node.children);
}
const perJob = (bytes) => `${Math.round(bytes / JOBS)}`.padStart(7);
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP);
console.log(`${perJob(total)} bytes per job in all (${JOBS} jobs)`);
console.log('\nby function');
for (const [name, bytes] of top(byFunction)) console.log(`${perJob(bytes)}  ${name}`);
console.log('\nby package');
for (const [name, bytes] of top(byPackage)) console.log(`${perJob(bytes)}  ${name}`);
