import { dirname, join } from 'node:path';
import { packageBinaries, rootStateDir } from './binaries';
import { canReach, serverAccount } from './server-account';

/**
 * Where `npm start` keeps its cluster: `preferred` (./.data/postgres), except as root when the
 * server's account cannot reach it (the project is in a private folder such as /root): then a
 * folder of that account's in /var/lib, one per project, so the data still survives a restart.
 */
export async function embeddedDataDir(preferred: string): Promise<string> {
  const account = serverAccount();
  if (!account || canReach(account, dirname(preferred))) return preferred;
  return join(rootStateDir(await packageBinaries(), account), 'postgres');
}
