// The development database of `npm start` and the tests' last resort: an embedded PostgreSQL from
// npm. Development tooling, not part of the example app (src/) nor of the package (libs/).
export { embeddedDataDir } from './data-dir';
export { startEmbeddedPostgres } from './embedded-postgres';
export type { EmbeddedPostgresOptions, EmbeddedPostgresServer } from './embedded-postgres';
export { EmbeddedPostgresError } from './errors';
export { findFreePort } from './free-port';
export { embeddedPostgresUrl, PASSWORD_FILE } from './password-file';
export { ROOT_STATE_BASE, SERVER_ACCOUNT } from './server-account';
