#!/usr/bin/env bash
# One scratch app of compat/run.sh (which packs the tarball and calls this once per app):
#   app.sh APP TARBALL DIR README
# copies compat/APP/{package.json,package-lock.json,tsconfig.json} to DIR (outside the repo),
# `npm ci`, installs TARBALL, checks that the package's peers are the app's single copies, writes
# README's ```ts file blocks and compat/main.ts into src/, compiles with tsc and runs node.
set -euo pipefail
app=$1 tarball=$2 dir=$3 readme=$4
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "compat $app [$SECONDS s]: $*"; }
fail() { echo "FAIL compat $app: $*" >&2; exit 1; }
npm_quiet=(--no-audit --no-fund --prefer-offline --loglevel=warn)

mkdir -p "$dir/src"
cp "$here/$app/package.json" "$here/$app/package-lock.json" "$here/$app/tsconfig.json" "$dir/"
cd "$dir"
module=cjs
[[ "$(node -p 'require("./package.json").type')" == module ]] && module=esm

say "npm ci, then npm install --no-save $(basename "$tarball")"
npm ci "${npm_quiet[@]}" >/dev/null
npm install --no-save "${npm_quiet[@]}" "$tarball" >/dev/null
[[ -f node_modules/nest-pg-job-queue/package.json ]] || fail "the tarball is not installed"

# One copy of each peer, the app's: a second @nestjs/common or typeorm would bring classes and
# metadata that the app's container does not know. `npm ls` also fails on a peer out of range.
for peer in @nestjs/common @nestjs/core @nestjs/schedule @nestjs/typeorm typeorm pg reflect-metadata rxjs; do
  copies=$(find ./node_modules -path "*/node_modules/$peer/package.json" | wc -l)
  [[ "$copies" == 1 ]] || { npm ls "$peer" >&2 || true; fail "$copies copies of $peer installed"; }
done
npm ls @nestjs/common @nestjs/core @nestjs/schedule @nestjs/typeorm typeorm pg nest-pg-job-queue >ls.txt 2>&1 ||
  { cat ls.txt >&2; fail "npm ls found a problem"; }
version() { node -p "require('./node_modules/$1/package.json').version"; }
nest_version=$(version @nestjs/core)
say "installed @nestjs/core $nest_version, @nestjs/common $(version @nestjs/common)," \
  "@nestjs/schedule $(version @nestjs/schedule), @nestjs/typeorm $(version @nestjs/typeorm)," \
  "typeorm $(version typeorm), pg $(version pg), typescript $(version typescript); one copy of each peer"

esm_flag=()
[[ $module == esm ]] && esm_flag=(--esm)
# An app that installs the optional entry points' peers gets every README block, observed.ts,
# dashboard.ts (it installs @nestjs/platform-express too) and cls-transactional.ts (nestjs-cls);
# one without gets none of them, and checks that each entry point names the package it needs.
peers=none
[[ "$(node -p 'Boolean(require("./package.json").dependencies["prom-client"])')" == true ]] && peers=installed
peer_flag=()
[[ $peers == none ]] && peer_flag=(--without-peers)
say "$(node "$here/extract-readme.mjs" "$readme" src "${esm_flag[@]}" "${peer_flag[@]}")"
cp "$here/main.ts" src/main.ts
[[ $peers == installed ]] && cp "$here/observed.ts" "$here/dashboard.ts" "$here/cls-transactional.ts" src/
if ! ./node_modules/.bin/tsc -p tsconfig.json >tsc.txt 2>&1; then
  echo "compat $app: tsc $(version typescript) errors (src/*.ts but main.ts are README blocks):" >&2
  node "$here/extract-readme.mjs" "$readme" --locate <tsc.txt >&2
  fail "tsc: the README's files do not compile against the tarball"
fi
# The output is what the app says it is: require() in CommonJS, import statements in ESM.
if [[ $module == esm ]]; then
  grep -q "^import .* from 'nest-pg-job-queue';" dist/app.module.js || fail "dist/app.module.js is not ESM"
else
  grep -q 'require("nest-pg-job-queue")' dist/app.module.js || fail "dist/app.module.js is not CommonJS"
fi
# Apps still on `"moduleResolution": "node"` see no `exports`: each entry point's types must
# resolve through the package's `typesVersions`.
if [[ $peers == installed && $module == cjs ]]; then
  mkdir -p node10 && cp "$here/node10-resolution.ts" node10/
  ./node_modules/.bin/tsc --noEmit --strict --skipLibCheck --moduleResolution node --module commonjs \
    --target es2022 --experimentalDecorators --emitDecoratorMetadata node10/node10-resolution.ts >node10.txt 2>&1 ||
    { cat node10.txt >&2; fail "an entry point's types do not resolve with moduleResolution node"; }
  say "moduleResolution node: every entry point's types resolve through typesVersions"
fi
say "tsc $(version typescript) (strict, $module output) compiled src/ ($(ls src | wc -l) files); node dist/main.js"

COMPAT_APP=$app COMPAT_MODULE=$module COMPAT_PEERS=$peers COMPAT_TARBALL=$(basename "$tarball") COMPAT_NEST_VERSION=$nest_version \
  node dist/main.js
say "done"
