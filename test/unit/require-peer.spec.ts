import { requirePeer } from '../../libs/job-queue/src/instrumentation/require-peer';

describe('an entry point without its optional peer', () => {
  it('throws one error naming the entry point and the package to install', () => {
    expect(() => requirePeer('nest-pg-job-queue/prometheus', 'no-such-peer-package')).toThrow(
      'nest-pg-job-queue/prometheus needs the package no-such-peer-package, which is not ' +
        'installed: npm install no-such-peer-package',
    );
  });

  it('is silent when the peer is installed', () => {
    expect(() =>
      requirePeer('nest-pg-job-queue/opentelemetry', '@opentelemetry/api'),
    ).not.toThrow();
  });
});
