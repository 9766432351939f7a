#!/usr/bin/env node
// The package's command-line tool (`npx nest-pg-job-queue --help`); the code is dist/cli/.
'use strict';
require('../dist/cli/main.js').run();
