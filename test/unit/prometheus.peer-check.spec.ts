import { requirePeer } from '../../libs/job-queue/src/instrumentation/require-peer';

const REQUIRE_PEER = '../../libs/job-queue/src/instrumentation/require-peer';

describe('nest-pg-job-queue/prometheus without prom-client', () => {
  it('checks for prom-client under its own name, before anything loads prom-client', async () => {
    await jest.isolateModulesAsync(async () => {
      jest.doMock('prom-client', () => {
        throw new Error('prom-client was loaded before the peer check');
      });
      // As if prom-client could not be resolved.
      const check = jest.fn((entryPoint: string, peer: string) => {
        throw new Error(`${entryPoint} needs the package ${peer}`);
      });
      jest.doMock(REQUIRE_PEER, () => ({ requirePeer: check }));
      await expect(import('../../libs/job-queue/src/prometheus')).rejects.toThrow(
        'nest-pg-job-queue/prometheus needs the package prom-client',
      );
      expect(check).toHaveBeenCalledWith('nest-pg-job-queue/prometheus', 'prom-client');
    });
  });

  it('throws one error that says what to install', () => {
    // Any package that is not installed stands for prom-client here.
    expect(() => requirePeer('nest-pg-job-queue/prometheus', 'prom-client-missing')).toThrow(
      new Error(
        'nest-pg-job-queue/prometheus needs the package prom-client-missing, which is not ' +
          'installed: npm install prom-client-missing',
      ),
    );
  });
});
