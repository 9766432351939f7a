'use strict';
// Finding installed packages whose `exports` hide their package.json (typeorm).
const fs = require('node:fs');
const path = require('node:path');

/** The folder of package `name` as `from` would resolve it. */
function packageDir(name, from = __dirname) {
  let dir = path.dirname(require.resolve(name, { paths: [from] }));
  while (
    !fs.existsSync(path.join(dir, 'package.json')) ||
    readJson(path.join(dir, 'package.json')).name !== name
  ) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json found for ${name}`);
    dir = parent;
  }
  return dir;
}

const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
const packageVersion = (name, from) =>
  readJson(path.join(packageDir(name, from), 'package.json')).version;

module.exports = { packageDir, packageVersion };
